# termpilot shell integration for zsh (.zshenv): read the user's own, keep ours as ZDOTDIR.
__tp_zdotdir="$ZDOTDIR"
__tp_user_zdotdir="${__TP_USER_ZDOTDIR:-$HOME}"
if [[ -r "$__tp_user_zdotdir/.zshenv" ]]; then
    ZDOTDIR="$__tp_user_zdotdir"
    source "$__tp_user_zdotdir/.zshenv"
    # The user's .zshenv may move their ZDOTDIR (XDG layouts): follow it.
    __tp_user_zdotdir="$ZDOTDIR"
    ZDOTDIR="$__tp_zdotdir"
fi
