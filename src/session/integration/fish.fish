# termpilot shell integration for fish: OSC 133 prompt marks and OSC 7 (cwd), nothing else.
# Loaded with `fish --init-command`, after the user's configuration.
function __tp_preexec --on-event fish_preexec
    printf '\e]133;C\a'
end
function __tp_postexec --on-event fish_postexec
    set -g __tp_status $status
end
function __tp_prompt_start --on-event fish_prompt
    if set -q __tp_status
        printf '\e]133;D;%s\a' $__tp_status
        set -e __tp_status
    end
    printf '\e]7;file://%s%s\a\e]133;A\a' $hostname (string replace -a % %25 -- $PWD)
end
functions -c fish_prompt __tp_user_prompt
function fish_prompt
    __tp_user_prompt
    printf '\e]133;B\a'
end
