# termpilot shell integration for bash: OSC 133 prompt marks and OSC 7 (cwd), nothing else.
# Started as `bash --rcfile <this file>`; the user's own startup files are read first.
if [ -n "$__TP_LOGIN" ]; then
    [ -r /etc/profile ] && . /etc/profile
    for __tp_f in ~/.bash_profile ~/.bash_login ~/.profile; do
        if [ -r "$__tp_f" ]; then . "$__tp_f"; break; fi
    done
    unset __tp_f
else
    [ -r /etc/bash.bashrc ] && . /etc/bash.bashrc
    [ -r ~/.bashrc ] && . ~/.bashrc
fi
unset __TP_LOGIN
if [ -n "${__TP_PS1-}" ]; then PS1="$__TP_PS1"; fi
unset __TP_PS1
# The nonce that signs our marks stays in this shell: programs it starts never see it.
__tp_nonce="${__TP_NONCE-}"
unset __TP_NONCE

__tp_prompt() {
    local ec=$?
    printf '\033]133;D;%s;tp=%s\007\033]7;file://%s%s\007' "$ec" "$__tp_nonce" "${HOSTNAME:-localhost}" "${PWD//%/%25}"
    return $ec
}
case ";${PROMPT_COMMAND-};" in
    *";__tp_prompt;"*) ;;
    *) PROMPT_COMMAND="__tp_prompt${PROMPT_COMMAND:+;$PROMPT_COMMAND}" ;;
esac
PS1='\[\033]133;A;tp='"$__tp_nonce"'\007\]'"${PS1-}"'\[\033]133;B;tp='"$__tp_nonce"'\007\]'
PS0="${PS0-}"$'\033]133;C;tp='"$__tp_nonce"$'\007'
