# termpilot shell integration for zsh (.zshenv): read the user's own, keep ours as ZDOTDIR.
__tp_user_zdotdir="${__TP_USER_ZDOTDIR:-$HOME}"
[[ -r "$__tp_user_zdotdir/.zshenv" ]] && ZDOTDIR="$__tp_user_zdotdir" source "$__tp_user_zdotdir/.zshenv"
