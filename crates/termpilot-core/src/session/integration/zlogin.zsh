# termpilot shell integration for zsh (.zlogin): the user's own.
[[ -r "$__tp_user_zdotdir/.zlogin" ]] && source "$__tp_user_zdotdir/.zlogin"
ZDOTDIR="$__tp_user_zdotdir"
