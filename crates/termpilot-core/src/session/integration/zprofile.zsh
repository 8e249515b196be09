# termpilot shell integration for zsh (.zprofile): the user's own.
[[ -r "$__tp_user_zdotdir/.zprofile" ]] && source "$__tp_user_zdotdir/.zprofile"
