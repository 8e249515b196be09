//! The end of the line that stands for output a read left out: how the agent reads it all
//! (the core says where the output starts; the face names the tool).

/// `; read them with since=<start> or terminal_get_history`, after "… N lines omitted".
pub fn read_more(start: u64) -> String {
    format!("; read them with since={start} or terminal_get_history")
}
