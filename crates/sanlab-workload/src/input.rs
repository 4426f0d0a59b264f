//! Reading the files workloads come from: a regular file of bounded size, and errors that name
//! their place.

/// Largest scenario, job or parameter file, each read whole: 16 MiB.
pub const MAX_TEXT_FILE_BYTES: u64 = 16 << 20;
/// Largest trace, read line by line: 64 GiB.
pub(crate) const MAX_TRACE_FILE_BYTES: u64 = 64 << 30;
/// Longest line of a trace: 64 KiB.
pub(crate) const MAX_TRACE_LINE_BYTES: u64 = 64 << 10;

/// Opens an input file: a regular file (not a device such as /dev/zero, a FIFO or a folder) of
/// at most `max_bytes`. Checked before opening, which would wait forever on a FIFO.
pub fn open_input(path: &std::path::Path, max_bytes: u64) -> std::io::Result<std::fs::File> {
    let invalid = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(invalid("not a regular file (a device, a FIFO or a folder): expected a file".into()));
    }
    if meta.len() > max_bytes {
        return Err(invalid(format!("{} bytes, above the limit of {max_bytes} bytes for this kind of file", meta.len())));
    }
    std::fs::File::open(path)
}

/// A scenario, job or parameter file's text (see [`open_input`]).
pub fn read_text(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    open_input(path, MAX_TEXT_FILE_BYTES)?.take(MAX_TEXT_FILE_BYTES).read_to_string(&mut text)?;
    Ok(text)
}

/// "path:line: message", the way every file-format error names its place.
pub(crate) fn at_line(path: &std::path::Path, line: usize, message: impl std::fmt::Display) -> String {
    format!("{}:{line}: {message}", path.display())
}
