# termpilot shell integration for zsh (.zshrc): the user's own, then OSC 133 marks and OSC 7.
[[ -r "$__tp_user_zdotdir/.zshrc" ]] && source "$__tp_user_zdotdir/.zshrc"
() {
    # The user's options (nounset, …) must not break the hooks.
    setopt localoptions unset
    [[ -n "$__TP_PS1" ]] && PS1="$__TP_PS1"
    unset __TP_PS1
    # The nonce that signs our marks stays in this shell: programs it starts never see it.
    typeset -g __tp_nonce="$__TP_NONCE"
    unset __TP_NONCE
    precmd_functions=(__tp_precmd $precmd_functions)
    preexec_functions+=(__tp_preexec)
    PS1=$'%{\033]133;A;tp='"$__tp_nonce"$'\007%}'"$PS1"$'%{\033]133;B;tp='"$__tp_nonce"$'\007%}'
    # Child zsh processes read the user's files directly.
    if [[ ! -o login ]]; then ZDOTDIR="$__tp_user_zdotdir"; fi
}
__tp_precmd() {
    local ec=$?
    printf '\033]133;D;%s;tp=%s\007\033]7;file://%s%s\007' "$ec" "$__tp_nonce" "${HOST:-localhost}" "${PWD//\%/%25}"
}
__tp_preexec() { printf '\033]133;C;tp=%s\007' "$__tp_nonce"; }
