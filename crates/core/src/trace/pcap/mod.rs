//! Packet captures that real tools read: pcap (nanosecond timestamps, Ethernet) with genuine
//! IPv4, TCP and MPTCP headers built from the simulated segments.
//!
//! Encodings follow RFC 791 (IPv4), RFC 9293 (TCP), RFC 7323 (timestamps, window scale 7),
//! RFC 2018 (SACK) and RFC 8684 (MPTCP v1): MP_CAPABLE with the 64-bit keys, MP_JOIN with the
//! receiver's token, nonces and HMAC-SHA256 truncated as the RFC says, and DSS with 64-bit
//! DATA_ACK, 64-bit data sequence numbers, relative subflow sequence numbers and data-level
//! lengths. Keys, nonces and initial sequence numbers come from the run's seed; the initial
//! data sequence number is derived from the key (SHA-256) as RFC 8684 §3.1 requires, so
//! analysers can match mappings across subflows. Payload bytes are zeros; `snaplen` cuts
//! records (the original length is kept). Files are streamed through buffered writers, so
//! memory stays bounded; with full payloads the cost is the disk's (≈ 3 kB per data packet
//! and hop end), with a header-only snap length it is small (see BENCHMARKS.md).
//!
//! Addresses: client `10.1.r.1`, server `10.2.r.1` on route `r` (so the subflows of a
//! connection use different address pairs), client port 40000 + 64·connection + subflow,
//! server port 5201.
//!
//! Deviations: TSecr echoes the latest TSval captured from the peer rather than the one of
//! the segment being acknowledged; no IPv4 options, no ECN bits, the TCP window field carries the advertised
//! window scaled by 2^7 (rounded up), no DATA_FIN / FIN (the engine models no teardown),
//! no ADD_ADDR (the engine's hosts know every path).
//!
//! Captures are asked for by the caller of a run ([`CaptureOptions`]), never by a scenario.

mod frame;

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::net::packet::Packet;
use crate::units::Time;
use frame::Framer;

/// Where captures are taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CapturePoint {
    /// One file per host of each connection, all its interfaces together:
    /// `<connection>-<client|server>.pcap` (like `tcpdump -i any` on that host).
    #[default]
    Host,
    /// One file per host interface: `<connection>-<client|server>-<path>.pcap`.
    Interface,
    /// One file per link: `<link>.pcap`, every packet offered to the link.
    Link,
}

impl CapturePoint {
    /// The capture point named `host`, `interface` or `link` (as `--pcap-per` spells them).
    pub fn from_name(name: &str) -> Option<CapturePoint> {
        match name {
            "host" => Some(CapturePoint::Host),
            "interface" => Some(CapturePoint::Interface),
            "link" => Some(CapturePoint::Link),
            _ => None,
        }
    }
}

/// Captures asked for by the caller of a run (the command line's `--pcap`, the Python API's
/// `pcap_dir`), never by a scenario: a scenario file a user was sent must not choose where
/// files are written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureOptions {
    /// Directory to write the captures into (created if missing).
    pub dir: PathBuf,
    pub per: CapturePoint,
    /// Bytes kept of each packet (headers are kept whole; `None`: everything).
    pub snaplen: Option<u32>,
}

/// A capture file that could not be written: which file (or the directory, when it could not
/// be created) and the system's error.
#[derive(Debug)]
pub struct CaptureError {
    pub file: PathBuf,
    pub error: std::io::Error,
}

impl std::fmt::Display for CaptureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.error)
    }
}

/// Opens a capture file for writing (a plain file, or in tests a writer that fails).
pub type Opener = Box<dyn FnMut(&Path) -> std::io::Result<Box<dyn Write + Send>> + Send>;

/// One capture file.
struct Sink {
    out: BufWriter<Box<dyn Write + Send>>,
}

impl Sink {
    fn create(out: Box<dyn Write + Send>) -> std::io::Result<Sink> {
        let mut out = BufWriter::with_capacity(1 << 16, out);
        // pcap global header, nanosecond resolution, Ethernet.
        out.write_all(&0xa1b2_3c4du32.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?;
        out.write_all(&0u32.to_le_bytes())?;
        out.write_all(&65_535u32.to_le_bytes())?;
        out.write_all(&1u32.to_le_bytes())?;
        Ok(Sink { out })
    }

    /// Writes one record: `headers`, then zero payload bytes up to `incl_len` in all.
    fn record(&mut self, t: Time, headers: &[u8], incl_len: usize, orig_len: usize) -> std::io::Result<()> {
        static ZEROS: [u8; 4096] = [0; 4096];
        let o = &mut self.out;
        let mut head = [0u8; 16];
        head[0..4].copy_from_slice(&((t.0 / 1_000_000_000) as u32).to_le_bytes());
        head[4..8].copy_from_slice(&((t.0 % 1_000_000_000) as u32).to_le_bytes());
        head[8..12].copy_from_slice(&(incl_len as u32).to_le_bytes());
        head[12..16].copy_from_slice(&(orig_len as u32).to_le_bytes());
        o.write_all(&head)?;
        let h = headers.len().min(incl_len);
        o.write_all(&headers[..h])?;
        let mut zeros = incl_len - h;
        while zeros > 0 {
            let n = zeros.min(ZEROS.len());
            o.write_all(&ZEROS[..n])?;
            zeros -= n;
        }
        Ok(())
    }
}

/// Where a capture point sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Point {
    /// A host's interface on a route: (connection, is client, route).
    Host(u32, bool, usize),
    /// A link, by index.
    Link(u32),
}

/// The file of each capture point.
#[derive(Default)]
struct Points {
    /// `host[c][client][route]`.
    host: Vec<[Vec<Option<usize>>; 2]>,
    /// `link[l]`.
    link: Vec<Option<usize>>,
}

impl Points {
    fn insert(&mut self, at: Point, file: usize) {
        let slot = match at {
            Point::Host(c, client, route) => {
                let c = c as usize;
                if self.host.len() <= c {
                    self.host.resize_with(c + 1, Default::default);
                }
                let routes = &mut self.host[c][usize::from(client)];
                if routes.len() <= route {
                    routes.resize(route + 1, None);
                }
                &mut routes[route]
            }
            Point::Link(l) => {
                let l = l as usize;
                if self.link.len() <= l {
                    self.link.resize(l + 1, None);
                }
                &mut self.link[l]
            }
        };
        *slot = Some(file);
    }

    #[inline]
    fn get(&self, at: Point) -> Option<usize> {
        match at {
            Point::Host(c, client, route) => *self.host.get(c as usize)?[usize::from(client)].get(route)?,
            Point::Link(l) => *self.link.get(l as usize)?,
        }
    }
}

/// Writes captures for a run; created only when captures are requested.
///
/// Writing never panics: the first I/O error (a full disk, a removed directory) is kept and
/// no more is written; the driver, which asks [`Capture::take_error`] every few thousand
/// events, stops the run and [`Capture::discard`]s the files, and [`Capture::finish`] returns
/// an error met at the end the same way, having removed every file the capture created: a
/// failed run leaves no partial capture behind.
pub struct Capture {
    dir: PathBuf,
    /// Whether `dir` was created here (removed again with the files on failure).
    made_dir: bool,
    snaplen: usize,
    /// Capture point → file index (several points may share a file, e.g. a host's
    /// interfaces), as tables indexed by the point's numbers: every packet looks its points
    /// up, a capture or not.
    points: Points,
    files: Vec<String>,
    sinks: Vec<Option<Sink>>,
    /// Which files this capture created (the only ones it ever removes).
    created: Vec<bool>,
    open: Opener,
    framer: Framer,
    error: Option<CaptureError>,
    /// Writing failed and the error was handed on ([`Capture::take_error`]).
    broken: bool,
}

/// Opens `path` as a new file; an existing file is never overwritten (the directory is the
/// caller's fresh one).
/// A user-given name (a connection's, a path's, a link's) as part of one file name inside the
/// capture directory: `%`, `/` and control characters are written as `%XX` per UTF-8 byte (RFC
/// 3986's percent-encoding), and so is a leading `.`. A name can then neither leave the
/// directory (`../x`, `/etc/x`) nor hide in it (`.x`); ordinary names are unchanged.
pub fn file_component(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, ch) in name.chars().enumerate() {
        if ch == '%' || ch == '/' || ch.is_control() || (i == 0 && ch == '.') {
            let mut buf = [0u8; 4];
            for b in ch.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(ch);
        }
    }
    out
}

fn open_file(path: &Path) -> std::io::Result<Box<dyn Write + Send>> {
    Ok(Box::new(File::create_new(path)?))
}

impl Capture {
    /// Creates `opts.dir` if missing and checks that a file can be written in it (a probe
    /// file, removed again), so an unwritable directory fails before the run; `names` gives
    /// each capture point its file stem.
    pub fn new(opts: &CaptureOptions, seed: u64, names: HashMap<Point, String>) -> Result<Capture, CaptureError> {
        Capture::with_opener(opts, seed, names, Box::new(open_file))
    }

    /// As [`Capture::new`], opening each file with `open`.
    pub fn with_opener(
        opts: &CaptureOptions,
        seed: u64,
        names: HashMap<Point, String>,
        open: Opener,
    ) -> Result<Capture, CaptureError> {
        let dir = opts.dir.clone();
        let made_dir = !dir.exists();
        let fail = |file: &Path, error| CaptureError { file: file.to_path_buf(), error };
        std::fs::create_dir_all(&dir).map_err(|e| fail(&dir, e))?;
        let probe = dir.join(format!(".write-probe-{}", std::process::id()));
        let probed = File::create(&probe).and_then(|_| std::fs::remove_file(&probe));
        if let Err(e) = probed {
            if made_dir {
                std::fs::remove_dir(&dir).ok();
            }
            return Err(fail(&dir, e));
        }
        let mut files: Vec<String> = Vec::new();
        let mut points = Points::default();
        let mut sorted: Vec<_> = names.into_iter().collect();
        sorted.sort_by(|a, b| a.1.cmp(&b.1));
        for (p, n) in sorted {
            let i = files.iter().position(|f| *f == n).unwrap_or_else(|| {
                files.push(n);
                files.len() - 1
            });
            points.insert(p, i);
        }
        Ok(Capture {
            dir,
            made_dir,
            snaplen: opts.snaplen.map_or(usize::MAX, |s| s as usize),
            sinks: (0..files.len()).map(|_| None).collect(),
            created: vec![false; files.len()],
            points,
            files,
            open,
            framer: Framer::new(seed),
            error: None,
            broken: false,
        })
    }

    fn path(&self, file: usize) -> PathBuf {
        self.dir.join(format!("{}.pcap", self.files[file]))
    }

    /// The error that made writing stop, if any (nothing more is written either way): the
    /// run should stop and [`Capture::discard`] the files.
    pub fn take_error(&mut self) -> Option<CaptureError> {
        let e = self.error.take();
        self.broken |= e.is_some();
        e
    }

    /// Records `p` at capture point `at`, seen at time `t`. `route` is the packet's route.
    pub fn record(&mut self, at: Point, t: Time, p: &Packet, route: usize) {
        if self.error.is_some() || self.broken {
            return;
        }
        let Some(file) = self.points.get(at) else { return };
        self.framer.build(p, route);
        let frame = &self.framer.frame;
        let len = frame.len() + p.payload as usize;
        let cut = len.min(self.snaplen.max(frame.len()));
        if self.sinks[file].is_none() {
            let path = self.path(file);
            let opened = (self.open)(&path).inspect(|_| self.created[file] = true);
            match opened.and_then(Sink::create) {
                Ok(s) => self.sinks[file] = Some(s),
                Err(error) => {
                    self.error = Some(CaptureError { file: path, error });
                    return;
                }
            }
        }
        let sink = self.sinks[file].as_mut().expect("created");
        if let Err(error) = sink.record(t, frame, cut, len) {
            self.error = Some(CaptureError { file: self.path(file), error });
        }
    }

    /// Flushes and closes every file; on the first error (kept from writing, or met now)
    /// removes every file this capture created and returns the error.
    pub fn finish(mut self) -> Result<(), CaptureError> {
        for file in 0..self.sinks.len() {
            if self.error.is_some() {
                break;
            }
            if let Some(s) = self.sinks[file].as_mut() {
                if let Err(error) = s.out.flush() {
                    self.error = Some(CaptureError { file: self.path(file), error });
                }
            }
        }
        match self.error.take() {
            Some(e) => {
                self.discard();
                Err(e)
            }
            None => Ok(()),
        }
    }

    /// Removes every file this capture created (and its directory if it made it): a run that
    /// stopped early or failed leaves no partial capture.
    pub fn discard(mut self) {
        for file in 0..self.sinks.len() {
            // Closed before removal; a failing flush of a file being removed is moot.
            if let Some(s) = self.sinks[file].take() {
                drop(s.out.into_parts());
            }
        }
        for file in (0..self.files.len()).filter(|&f| self.created[f]) {
            std::fs::remove_file(self.path(file)).ok();
        }
        if self.made_dir {
            std::fs::remove_dir(&self.dir).ok();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Dsn, Seq};

    /// A file that takes `room` bytes, then fails as a full disk does (ENOSPC).
    struct Full {
        file: File,
        room: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.room == 0 {
                return Err(std::io::Error::from_raw_os_error(28));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            self.file.write(&buf[..n])
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.file.flush()
        }
    }

    fn data_packet(uid: u64) -> Packet {
        Packet {
            uid,
            conn: 0,
            subflow: 0,
            to_server: true,
            hop: 0,
            flags: crate::net::packet::flags::ACK,
            mp: Default::default(),
            wire_len: 1500,
            payload: 1448,
            seq: Seq(uid * 1448),
            ack: Seq(0),
            wnd: 65_535,
            sack: Default::default(),
            dsn: Dsn(0),
            data_ack: Dsn(0),
            ack64: true,
            sent_at: Time::ZERO,
            ts_echo: Time::ZERO,
        }
    }

    #[test]
    fn names_stay_one_file_name_inside_the_directory() {
        // Ordinary names are kept; what could name another place or hide the file is escaped.
        assert_eq!(file_component("mptcp"), "mptcp");
        assert_eq!(file_component("wifi.up"), "wifi.up");
        assert_eq!(file_component("../../escaped"), "%2E.%2F..%2Fescaped");
        assert_eq!(file_component("/tmp/x"), "%2Ftmp%2Fx");
        assert_eq!(file_component(".hidden"), "%2Ehidden");
        assert_eq!(file_component("a\nb%"), "a%0Ab%25");
        assert_eq!(file_component("\u{85}"), "%C2%85");
        for name in ["..", ".", "/", "a/../../b", "\0"] {
            let c = file_component(name);
            assert!(!c.contains('/') && c != "." && c != ".." && !c.starts_with('.'), "{name:?} -> {c:?}");
        }
    }

    fn temp_dir(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("mptcplab-pcap-{name}-{}", std::process::id()))
    }

    #[test]
    fn a_full_disk_is_an_error_naming_the_file_and_the_partial_files_are_removed() {
        let dir = temp_dir("full");
        let opts = CaptureOptions { dir: dir.clone(), per: CapturePoint::Host, snaplen: None };
        let names = HashMap::from([(Point::Host(0, true, 0), "c-client".to_string())]);
        // Room for 100 kB: the 64 KiB buffer is written out once, then the disk is full.
        let open: Opener = Box::new(|p: &Path| {
            Ok(Box::new(Full { file: File::create_new(p)?, room: 100_000 }) as Box<dyn Write + Send>)
        });
        let mut cap = Capture::with_opener(&opts, 1, names, open).unwrap();
        let file = dir.join("c-client.pcap");
        let mut k = 0;
        // A 1448 B packet records 16 + 1514 B: 67 packets fill 100 kB, the buffer's second
        // write-out (at 2 × 64 KiB) fails. No panic, and nothing more is written after.
        while k < 1000 {
            cap.record(Point::Host(0, true, 0), Time(k * 1000), &data_packet(k), 0);
            k += 1;
        }
        assert!(file.exists(), "the partial file is there until the capture is discarded");
        let e = cap.take_error().expect("the disk filled up");
        assert_eq!(e.file, file);
        assert_eq!(e.error.kind(), std::io::ErrorKind::StorageFull);
        assert!(e.to_string().contains("c-client.pcap") && e.to_string().contains("No space left on device"));
        cap.record(Point::Host(0, true, 0), Time(k * 1000), &data_packet(k), 0);
        assert!(cap.take_error().is_none(), "one error, kept; later records are dropped");
        cap.discard();
        assert!(!dir.exists(), "the file and the directory the capture made are removed");
    }

    #[test]
    fn an_error_met_when_flushing_is_returned_by_finish_and_cleans_up() {
        let dir = temp_dir("flush");
        let opts = CaptureOptions { dir: dir.clone(), per: CapturePoint::Host, snaplen: Some(100) };
        let names = HashMap::from([(Point::Host(0, true, 0), "c-client".to_string())]);
        // Room for the 24-byte file header only: every record sits in the buffer until
        // `finish` flushes it.
        let open: Opener =
            Box::new(|p: &Path| Ok(Box::new(Full { file: File::create_new(p)?, room: 24 }) as Box<dyn Write + Send>));
        let mut cap = Capture::with_opener(&opts, 1, names, open).unwrap();
        for k in 0..10 {
            cap.record(Point::Host(0, true, 0), Time(k), &data_packet(k), 0);
        }
        assert!(cap.take_error().is_none());
        let e = cap.finish().expect_err("the flush fails");
        assert_eq!(e.file, dir.join("c-client.pcap"));
        assert!(!dir.exists());
    }

    #[test]
    fn existing_files_are_never_overwritten_or_removed() {
        let dir = temp_dir("exists");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("c-client.pcap"), b"the user's data").unwrap();
        let opts = CaptureOptions { dir: dir.clone(), per: CapturePoint::Host, snaplen: None };
        let names = HashMap::from([(Point::Host(0, true, 0), "c-client".to_string())]);
        let mut cap = Capture::new(&opts, 1, names).unwrap();
        cap.record(Point::Host(0, true, 0), Time::ZERO, &data_packet(0), 0);
        let e = cap.finish().expect_err("the file exists");
        assert_eq!(e.error.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(dir.join("c-client.pcap")).unwrap(), b"the user's data");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unusable_directory_fails_before_the_run() {
        let file = temp_dir("a-file");
        std::fs::write(&file, b"not a directory").unwrap();
        let opts = CaptureOptions { dir: file.join("caps"), per: CapturePoint::Host, snaplen: None };
        let e = Capture::new(&opts, 1, HashMap::new()).err().expect("refused");
        assert_eq!(e.file, file.join("caps"));
        std::fs::remove_file(&file).unwrap();
    }
}
