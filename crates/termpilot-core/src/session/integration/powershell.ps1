# termpilot shell integration for PowerShell: OSC 133 prompt marks and OSC 7 (cwd).
# Dot-sourced at start-up (-NoLogo -NoProfile -NoExit -Command ". '<this file>'").
$global:__tp_user_prompt = $function:prompt
# The nonce that signs our marks stays in this shell: programs it starts never see it.
$global:__tp_nonce = $env:__TP_NONCE
Remove-Item Env:__TP_NONCE -ErrorAction SilentlyContinue
function global:prompt {
    $ok = $?
    $ec = if ($ok) { 0 } elseif ($global:LASTEXITCODE) { $global:LASTEXITCODE } else { 1 }
    $e = [char]27
    $b = [char]7
    $cwd = $PWD.ProviderPath -replace '\\', '/'
    $inner = & $global:__tp_user_prompt
    $s = ";tp=$global:__tp_nonce"
    "$e]133;D;$ec$s$b$e]7;file://$env:COMPUTERNAME/$cwd$b$e]133;A$s$b$inner$e]133;B$s$b"
}
