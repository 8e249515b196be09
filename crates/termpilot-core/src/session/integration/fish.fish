# termpilot shell integration for fish: OSC 133 prompt marks and OSC 7 (cwd), nothing else.
# Loaded with `fish --init-command`, after the user's configuration.
# The nonce that signs our marks stays in this shell: programs it starts never see it.
set -g __tp_nonce $__TP_NONCE
set -e __TP_NONCE
function __tp_preexec --on-event fish_preexec
    printf '\e]133;C;tp=%s\a' $__tp_nonce
end
function __tp_postexec --on-event fish_postexec
    set -g __tp_status $status
end
function __tp_prompt_start --on-event fish_prompt
    if set -q __tp_status
        printf '\e]133;D;%s;tp=%s\a' $__tp_status $__tp_nonce
        set -e __tp_status
    end
    printf '\e]7;file://%s%s\a\e]133;A;tp=%s\a' $hostname (string replace -a % %25 -- $PWD) $__tp_nonce
end
functions -c fish_prompt __tp_user_prompt
function fish_prompt
    __tp_user_prompt
    printf '\e]133;B;tp=%s\a' $__tp_nonce
end
