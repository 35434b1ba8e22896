//! Reading a file a user named: only a regular file, and only up to a size limit per kind.
//!
//! A FIFO given as a scenario would block irn forever and `/dev/zero` would be read until memory
//! runs out, so every reader of a user-named file (scenarios, ns-3 topology and flow files,
//! CDFs, CSV traces, and the CLI's readers of result files) opens it here: a FIFO, device,
//! socket or directory is refused before it is opened, and a file longer than its kind's limit
//! is refused by its length, or, if it grows while read, as soon as it passes the limit. The
//! errors are `std::io::Error`s whose text says what is wrong; the callers' errors name the file.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// A kind of input file and the most bytes irn reads of one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Input {
    /// What the file is, for errors: "a scenario".
    pub what: &'static str,
    /// The most bytes accepted.
    pub limit: u64,
}

const MIB: u64 = 1 << 20;

/// A scenario (or a user's experiment) file: 64 MiB.
pub const SCENARIO: Input = Input {
    what: "a scenario",
    limit: 64 * MIB,
};
/// An ns-3 topology file: 64 MiB.
pub const TOPOLOGY: Input = Input {
    what: "a topology file",
    limit: 64 * MIB,
};
/// A flow-size CDF: 16 MiB.
pub const CDF: Input = Input {
    what: "a CDF file",
    limit: 16 * MIB,
};
/// An ns-3 flow file or a CSV trace of flows: 1 GiB (some 20 million flows).
pub const FLOWS: Input = Input {
    what: "a flow file",
    limit: 1024 * MIB,
};
/// A small result file irn wrote (`summary.json`, `comparison.csv`, `sweep_summary.csv`):
/// 64 MiB.
pub const RESULT: Input = Input {
    what: "a result file",
    limit: 64 * MIB,
};
/// A per-flow or time-series table irn wrote (`flows.csv`, `series/*.csv`), read row by row:
/// 16 GiB.
pub const RESULT_TABLE: Input = Input {
    what: "a result table",
    limit: 16 * 1024 * MIB,
};

/// The whole of `path` as UTF-8 text, if it is a regular file of at most `input.limit` bytes;
/// text that is not UTF-8 is refused with the line where it stops being so.
pub fn read_text(path: &Path, input: Input) -> io::Result<String> {
    let mut bytes = Vec::new();
    open(path, input)?.read_to_end(&mut bytes)?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let line = 1 + bytes[..valid].iter().filter(|&&b| b == b'\n').count();
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "line {line} is not UTF-8 text (byte {:#04x}); save the file as UTF-8",
                bytes[valid]
            ),
        )
    })
}

/// `path` opened for reading, if it is a regular file of at most `input.limit` bytes; reading
/// it past the limit (a file that grew) fails.
pub fn open(path: &Path, input: Input) -> io::Result<Capped> {
    // Checked before opening: opening a FIFO blocks until something writes to it.
    regular(&std::fs::metadata(path)?, input)?;
    let file = File::open(path)?;
    // And again on what was opened, in case the name changed hands in between.
    regular(&file.metadata()?, input)?;
    Ok(Capped {
        file: file.take(input.limit + 1),
        input,
    })
}

/// An opened input that fails once more than its limit has been read.
#[derive(Debug)]
pub struct Capped {
    file: io::Take<File>,
    input: Input,
}

impl Read for Capped {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        if self.file.limit() == 0 {
            return Err(too_large(self.input));
        }
        Ok(n)
    }
}

/// Refuses what is not a regular file, or is longer than `input` may be.
fn regular(meta: &std::fs::Metadata, input: Input) -> io::Result<()> {
    let kind = meta.file_type();
    if !kind.is_file() {
        let what = if kind.is_dir() {
            "a directory"
        } else if is_fifo(&kind) {
            "a FIFO"
        } else {
            "a device or socket"
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{what}, not a regular file: {} must be a regular file",
                input.what
            ),
        ));
    }
    if meta.len() > input.limit {
        return Err(too_large(input));
    }
    Ok(())
}

/// What starts a checksum made with XXH3 (64 bits): fast enough for a run's hundreds of
/// megabytes of time series or a gigabyte of flows. It tells a file from one changed since,
/// not from an adversary's.
pub const XXH3: &str = "xxh3:";

/// The checksum of `bytes` (see [`XXH3`]).
pub fn checksum(bytes: &[u8]) -> String {
    format!("{XXH3}{:016x}", xxhash_rust::xxh3::xxh3_64(bytes))
}

/// The checksum of the file at `path` (see [`XXH3`]), read in pieces through [`open`].
pub fn file_checksum(path: &Path, input: Input) -> io::Result<String> {
    let mut file = open(path, input)?;
    let mut hash = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0; 1 << 16];
    loop {
        match file.read(&mut buf) {
            Ok(0) => return Ok(format!("{XXH3}{:016x}", hash.digest())),
            Ok(n) => hash.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

#[cfg(unix)]
fn is_fifo(kind: &std::fs::FileType) -> bool {
    std::os::unix::fs::FileTypeExt::is_fifo(kind)
}

#[cfg(not(unix))]
fn is_fifo(_: &std::fs::FileType) -> bool {
    false
}

fn too_large(input: Input) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("larger than {} may be ({})", input.what, size(input.limit)),
    )
}

/// `bytes` in MiB when whole, else in bytes.
fn size(bytes: u64) -> String {
    if bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("irn-input-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn text_that_is_not_utf8_names_its_line() {
        let d = dir("latin1");
        let f = d.join("topo.txt");
        std::fs::write(&f, b"3 1 2\n0\nnotes: 1 \xb5s\n").unwrap();
        let e = read_text(&f, TOPOLOGY).unwrap_err().to_string();
        assert_eq!(
            e,
            "line 3 is not UTF-8 text (byte 0xb5); save the file as UTF-8"
        );
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_regular_file_within_the_limit_is_read() {
        let d = dir("ok");
        let f = d.join("s.toml");
        std::fs::write(&f, "name = \"x\"\n").unwrap();
        assert_eq!(read_text(&f, SCENARIO).unwrap(), "name = \"x\"\n");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let d = dir("fifo");
        let f = d.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&f).status();
        if !made.is_ok_and(|s| s.success()) {
            return; // No mkfifo here: nothing to test.
        }
        let e = read_text(&f, SCENARIO).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a FIFO, not a regular file: a scenario must be a regular file"
        );
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn devices_and_directories_are_refused() {
        let e = read_text(Path::new("/dev/zero"), FLOWS).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a device or socket, not a regular file: a flow file must be a regular file"
        );
        let d = dir("dir");
        let e = read_text(&d, CDF).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a directory, not a regular file: a CDF file must be a regular file"
        );
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_file_past_the_limit_is_refused_unread() {
        let d = dir("large");
        let f = d.join("big.toml");
        // Sparse: 64 MiB and one byte, no blocks written.
        let file = File::create(&f).unwrap();
        file.set_len(SCENARIO.limit + 1).unwrap();
        let e = read_text(&f, SCENARIO).unwrap_err();
        assert_eq!(e.to_string(), "larger than a scenario may be (64 MiB)");
        // Exactly at the limit passes the length check; reading stops at it.
        let small = Input {
            what: "a test file",
            limit: 4,
        };
        std::fs::write(&f, "12345").unwrap();
        let e = read_text(&f, small).unwrap_err();
        assert_eq!(e.to_string(), "larger than a test file may be (4 bytes)");
        std::fs::write(&f, "1234").unwrap();
        assert_eq!(read_text(&f, small).unwrap(), "1234");
        std::fs::remove_dir_all(d).unwrap();
    }
}
