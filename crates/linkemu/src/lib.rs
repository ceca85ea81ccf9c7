//! The real-time link emulator of the Linux backend, for one path of a scenario: a library
//! run by its own program (`mptcplab-linkemu`) and by the Python package's extension module
//! (`mptcplab._core.linkemu_main`, started as `python -m mptcplab.kernel.linkemu`), so that
//! every installation of the package has it.
//!
//! It forwards Ethernet frames between two interfaces (the client side and the server side
//! of the path, usually veth ends in a namespace of their own) through the engine's sans-IO
//! link model (`mptcplab_core::net::link::Link`): the same rate or capacity trace, queue
//! limit, AQM, loss model, delay, jitter and schedule as a simulator run. Time is
//! nanoseconds of the monotonic clock since the emulator started.
//!
//! The loop: wait (`ppoll`, nanosecond timeout) for a frame on either interface or for the
//! next instant a link hands a frame over; offer received frames to the link of their
//! direction stamped with their arrival time; send every frame the links deliver.
//!
//! Deviations from the simulator: a frame is handed over at the first check at or after its
//! arrival time (the loop sleeps until shortly before a deadline, then polls: 200 µs at a
//! normal priority, at most a tenth of a packet's time at a real-time one, see `default_spin`;
//! the lateness is a few microseconds while the emulator keeps up; it measures it, see
//! [`lateness`]); the rate is charged on the IP
//! packet (the frame without its 14-byte Ethernet header), as the simulator charges its
//! `wire_len`. Offloads (GRO/GSO/TSO) must be off on every interface so that frames are
//! real, MTU-sized packets; a frame larger than the receive buffer is counted and dropped.
//!
//! Virtual time (`--virtual-time`, the `uml` backend's mode): inside a User-Mode Linux kernel
//! in time-travel mode (`time-travel=inf-cpu`) the clock advances only when every task
//! sleeps, so the loop never polls without sleeping: it sleeps until the deadline itself, and
//! the kernel's clock stands at that instant when it wakes (the lateness is what reading the
//! clock costs there, 256 ns a reading). A loop that polled would hold the clock still and
//! never reach its deadline.
//!
//! Host processing time (`--host-jitter NS`, the `uml` backend's counterpart of the
//! simulator's `host_jitter`): a kernel in virtual time takes no time to process a packet, so
//! each frame is held for the simulator's draw (`sim::host`: the measured shape scaled to the
//! mean `NS`, from the run seed's `host:client:jitter` and `host:server:jitter` streams) before
//! it enters the link, in arrival order. Deviation: a host with several paths has one such
//! queue per path (each path's emulator is its own process), where the simulator has one per
//! host.
//!
//! Scheduling (`--fifo PRIO`, `--cpu N`): the thread can run at a real-time priority and on
//! one CPU; a refused request is reported in the final JSON line's `sched`, not fatal (see
//! [`sched`]).
//!
//! Usage: `mptcplab-linkemu --scenario FILE.json --path NAME --client-if IF --server-if IF
//! [--seed N] [--epoch-stdin] [--virtual-time] [--host-jitter NS] [--fifo PRIO] [--cpu N]
//! [--spin NS]`. It prints `ready` once
//! both interfaces are open, and on
//! SIGTERM or SIGINT one JSON line with each direction's counters, then exits. The counters
//! include how late frames left against their scheduled departure (`late_frames`,
//! `late_after_s`, `max_lateness_s`, `p50_lateness_s`, `p99_lateness_s`) and the frames lost at the emulator's
//! own sockets (`socket_drops`: the `PACKET_STATISTICS` drops of the receiving socket, whose
//! queue overflowed before the emulator read it; `tx_drops`: frames the sending socket had no
//! room for), from which the backend judges whether the run is reliable.
//!
//! Time zero of the links (where schedules and capacity traces start) is the emulator's
//! start, or with `--epoch-stdin` the `CLOCK_MONOTONIC` instant in nanoseconds read as one
//! line from standard input after `ready` (the run's own time origin, so that a schedule
//! step at `at = "3s"` happens 3 s into the run, as in the simulator). Before that instant
//! the links' time stands at zero.

pub mod lateness;
mod sched;
mod sock;

use std::collections::VecDeque;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use lateness::Lateness;
use mptcplab_core::net::link::{Link, LinkParams, Stow, WireLen};
use mptcplab_core::sim::host::HostQueue;
use mptcplab_core::units::{Dur, Time};
use mptcplab_core::Scenario;
use sock::RawSocket;

/// An Ethernet frame as received.
struct Frame(Vec<u8>);

const ETH_HEADER: u32 = 14;
/// Largest frame read (jumbo frames are not expected: offloads are off).
const MAX_FRAME: usize = 65536 + ETH_HEADER as usize;
/// How long before a deadline the loop stops sleeping and polls (ns), unless `--spin` says.
const SPIN_NS: u64 = 200_000;

impl WireLen for Frame {
    fn wire_len(&self) -> u32 {
        (self.0.len() as u32).saturating_sub(ETH_HEADER)
    }
}

/// A frame propagates as it is (its bytes are on the heap already).
impl Stow for Frame {
    type Compact = Frame;
    type Extra = ();
    fn stow(self, _: &mut VecDeque<()>) -> Frame {
        self
    }
    fn unstow(c: Frame, _: &mut VecDeque<()>) -> Frame {
        c
    }
}

/// `CLOCK_REALTIME` minus `CLOCK_MONOTONIC` (ns): the realtime reading is bracketed by two
/// monotonic ones and set against their midpoint, and the tightest of three brackets is kept,
/// so that a preemption between two readings does not shift the offset by its length.
fn real_to_mono_ns() -> i128 {
    let mut best = (u64::MAX, 0i128);
    for _ in 0..3 {
        let m1 = clock_ns(libc::CLOCK_MONOTONIC);
        let r = clock_ns(libc::CLOCK_REALTIME);
        let m2 = clock_ns(libc::CLOCK_MONOTONIC);
        if m2 - m1 < best.0 {
            best = (m2 - m1, r as i128 - (m1 as i128 + m2 as i128) / 2);
        }
    }
    best.1
}

/// A clock's reading in nanoseconds.
fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is valid for the call.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

struct Args {
    scenario: String,
    path: String,
    client_if: String,
    server_if: String,
    seed: Option<u64>,
    epoch_stdin: bool,
    /// Sleep until each deadline instead of polling its last `SPIN_NS` (module docs).
    virtual_time: bool,
    /// Mean host processing delay before a frame enters the link (module docs).
    host_jitter: Dur,
    /// Real-time priority (`SCHED_FIFO`, 1-99) and the CPU to run on (module docs).
    fifo: Option<i32>,
    cpu: Option<usize>,
    /// How long before a deadline the loop stops sleeping and polls (ns; module docs; None:
    /// [`default_spin`]).
    spin_ns: Option<u64>,
}

fn parse_args(args: Vec<String>) -> Result<Args, String> {
    let mut it = args.into_iter();
    let (mut scenario, mut path, mut client_if, mut server_if, mut seed) = (None, None, None, None, None);
    let (mut epoch_stdin, mut virtual_time) = (false, false);
    let mut host_jitter = Dur::ZERO;
    let (mut fifo, mut cpu, mut spin_ns) = (None, None, None);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--scenario" => scenario = Some(value()?),
            "--path" => path = Some(value()?),
            "--client-if" => client_if = Some(value()?),
            "--server-if" => server_if = Some(value()?),
            "--seed" => seed = Some(value()?.parse::<u64>().map_err(|e| format!("--seed: {e}"))?),
            "--epoch-stdin" => epoch_stdin = true,
            "--virtual-time" => virtual_time = true,
            "--host-jitter" => {
                host_jitter = Dur(value()?.parse::<u64>().map_err(|e| format!("--host-jitter (ns): {e}"))?)
            }
            "--fifo" => {
                let p = value()?.parse::<i32>().map_err(|e| format!("--fifo: {e}"))?;
                if !(1..=99).contains(&p) {
                    return Err(format!("--fifo: {p} is not a SCHED_FIFO priority (1-99)"));
                }
                fifo = Some(p)
            }
            "--cpu" => cpu = Some(value()?.parse::<usize>().map_err(|e| format!("--cpu: {e}"))?),
            "--spin" => spin_ns = Some(value()?.parse::<u64>().map_err(|e| format!("--spin (ns): {e}"))?),
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    let need = |v: Option<String>, name: &str| v.ok_or_else(|| format!("{name} is required"));
    Ok(Args {
        scenario: need(scenario, "--scenario")?,
        path: need(path, "--path")?,
        client_if: need(client_if, "--client-if")?,
        server_if: need(server_if, "--server-if")?,
        seed,
        epoch_stdin,
        virtual_time,
        host_jitter,
        fifo,
        cpu,
        spin_ns,
    })
}

/// How long before each deadline the loop polls, unless `--spin` says: at a normal priority
/// [`SPIN_NS`], since a sleeping thread may wake that late on a loaded host; at a real-time
/// priority, which wakes within tens of microseconds, at most a tenth of a full-size packet's
/// time on the path's faster direction (`late_after`), so that polling holds the CPU for at most
/// about a tenth of the time a busy link keeps the emulator (a 57 Mbit/s link: 21 µs before each
/// 210 µs packet) while the stacks beside it need that CPU.
fn default_spin(realtime: bool, late_after: impl Iterator<Item = u64>) -> u64 {
    match realtime {
        false => SPIN_NS,
        true => SPIN_NS.min(late_after.min().unwrap_or(u64::MAX) / 10),
    }
}

/// One direction: frames read on `from` cross `link` and leave on `to`.
struct Direction {
    link: Link<Frame>,
    from: usize,
    to: usize,
    /// Frames the outgoing socket had no room for, and frames too large to read whole.
    tx_drops: u64,
    oversized: u64,
    /// Time of the last frame offered (offers never go back in time).
    last_offer: Time,
    /// How late frames left against their scheduled departure.
    lateness: Lateness,
    /// Frames the receiving socket dropped (its queue was full).
    socket_drops: u64,
    /// The sending host's processing delay (`--host-jitter`): its draws, the mean, and the
    /// frames waiting for their time to enter the link, in arrival order.
    host: Option<(HostQueue, Dur)>,
    held: VecDeque<(Time, Frame)>,
}

impl Direction {
    fn new(name: String, params: LinkParams, seed: u64, from: usize, mtu: u64) -> Direction {
        let lateness = Lateness::new(mtu, params.nominal_rate.bps());
        Direction {
            link: Link::new(name, params, seed),
            from,
            to: 1 - from,
            tx_drops: 0,
            oversized: 0,
            last_offer: Time::ZERO,
            lateness,
            socket_drops: 0,
            host: None,
            held: VecDeque::new(),
        }
    }

    /// Offers a frame that arrived at `at` to the link, or with a host delay holds it until
    /// its time: `max(at + draw, previous frame's time)`, as `sim::host::HostQueue::push`.
    fn arrive(&mut self, at: Time, f: Frame) {
        match &mut self.host {
            None => {
                self.link.offer(at, f);
            }
            Some((h, mean)) => {
                let t = Time((at + h.delay(*mean)).0.max(self.held.back().map_or(0, |b| b.0 .0)));
                self.held.push_back((t, f));
            }
        }
    }

    /// Offers the held frames whose time has come by `t`, each at its own time.
    fn release(&mut self, t: Time) {
        while self.held.front().is_some_and(|(at, _)| *at <= t) {
            let (at, f) = self.held.pop_front().expect("checked");
            self.link.offer(at, f);
        }
    }

    /// The next instant this direction needs the loop: the link's, or a held frame's.
    fn next_wake(&self) -> Option<Time> {
        let held = self.held.front().map(|(at, _)| *at);
        match (self.link.next_wake(), held) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Sends every frame due by `t`, one due instant at a time, so that each frame's
    /// lateness is measured against its own scheduled departure.
    fn hand_over(
        &mut self,
        t: Time,
        socks: &[RawSocket],
        out: &mut Vec<Frame>,
        now: impl Fn() -> Time,
    ) -> Result<(), String> {
        while let Some(w) = self.link.next_wake().filter(|w| *w <= t) {
            self.link.advance(w, out);
            // A link that needs the driver again at the same instant without handing anything
            // over would not progress: the rest goes out at `t`.
            let stuck = out.is_empty() && self.link.next_wake() == Some(w);
            if stuck {
                self.link.advance(t, out);
            }
            for f in out.drain(..) {
                let to = &socks[self.to];
                self.lateness.record(now().0.saturating_sub(w.0));
                if !to.send(&f.0).map_err(|e| format!("send on {}: {e}", to.ifname))? {
                    self.tx_drops += 1;
                }
            }
            if stuck {
                break;
            }
        }
        Ok(())
    }
}

fn stats_json(d: &Direction, end: Time) -> serde_json::Value {
    let s = &d.link.stats;
    serde_json::json!({
        "name": d.link.name,
        "arrived_packets": s.arrived,
        "delivered_packets": s.delivered,
        "delivered_bytes": s.delivered_bytes,
        "queue_drops": s.queue_drops,
        "aqm_drops": s.aqm_drops,
        "loss_drops": s.loss_drops,
        "max_queue_packets": s.max_queue_packets,
        "max_queue_bytes": s.max_queue_bytes,
        "utilisation": d.link.utilisation(end),
        "tx_drops": d.tx_drops,
        "oversized": d.oversized,
        "socket_drops": d.socket_drops,
        "frames_sent": d.lateness.frames,
        "late_frames": d.lateness.late,
        "late_after_s": d.lateness.late_after as f64 / 1e9,
        "max_lateness_s": d.lateness.max as f64 / 1e9,
        "p50_lateness_s": d.lateness.quantile(0.5) as f64 / 1e9,
        "p99_lateness_s": d.lateness.quantile(0.99) as f64 / 1e9,
        "end_s": end.secs_f64(),
        "rate_bps": d.link.params.nominal_rate.bps(),
        "delay_s": d.link.params.delay.secs_f64(),
    })
}

fn run(args: Args) -> Result<(), String> {
    let text = std::fs::read_to_string(&args.scenario).map_err(|e| format!("{}: {e}", args.scenario))?;
    let sc = Scenario::from_json_str(&text).map_err(|e| format!("{}: {}: {}", args.scenario, e.path, e.message))?;
    let i = sc.path_index(&args.path).ok_or_else(|| format!("the scenario has no path named {}", args.path))?;
    let seed = args.seed.unwrap_or(sc.seed);
    let [up, down] = sc.links_of(i);
    // The largest packet the path carries (what `Lateness` counts a serialisation time of).
    let mtu = sc.connections.iter().map(|c| c.tcp.mtu).max().unwrap_or(1500);
    let socks = [RawSocket::open(&args.client_if, 8 << 20), RawSocket::open(&args.server_if, 8 << 20)];
    let socks: Vec<RawSocket> = socks.into_iter().collect::<Result<_, _>>().map_err(|e| e.to_string())?;
    let mut dirs = [
        Direction::new(format!("{}.up", args.path), up, seed, 0, mtu),
        Direction::new(format!("{}.down", args.path), down, seed, 1, mtu),
    ];
    if args.host_jitter > Dur::ZERO {
        for (d, node) in dirs.iter_mut().zip(["client", "server"]) {
            d.host = Some((HostQueue::new(seed, node), args.host_jitter));
        }
    }
    // Refused requests are reported, not fatal (`sched` docs).
    let mut sched = sched::apply(args.fifo, args.cpu);
    let spin_ns =
        args.spin_ns.unwrap_or_else(|| default_spin(sched.fifo.is_some(), dirs.iter().map(|d| d.lateness.late_after)));
    sched.spin_ns = spin_ns;
    // Drops counted from here on (reading the statistics resets them).
    for s in &socks {
        s.take_drops().map_err(|e| e.to_string())?;
    }
    // SAFETY: installing async-signal-safe handlers (they only store to an atomic).
    unsafe {
        libc::signal(libc::SIGTERM, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t);
        libc::signal(libc::SIGINT, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t);
        // Wake up within a microsecond of the requested instant, not the default 50 µs.
        libc::prctl(libc::PR_SET_TIMERSLACK, 1u64);
    }
    println!("ready");
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    let start = if args.epoch_stdin {
        let mut line = String::new();
        // End of input without an epoch (the run stopped before it started): start now.
        match std::io::stdin().read_line(&mut line).map_err(|e| format!("reading the epoch: {e}"))? {
            0 => clock_ns(libc::CLOCK_MONOTONIC),
            _ => line
                .trim()
                .parse::<u64>()
                .map_err(|e| format!("the epoch `{}` is not a number of ns: {e}", line.trim()))?,
        }
    } else {
        clock_ns(libc::CLOCK_MONOTONIC)
    };
    let now = || Time(clock_ns(libc::CLOCK_MONOTONIC).saturating_sub(start));

    let mut buf = vec![0u8; MAX_FRAME];
    let mut out = Vec::new();
    let mut pfds: Vec<libc::pollfd> =
        socks.iter().map(|s| libc::pollfd { fd: s.raw_fd(), events: libc::POLLIN, revents: 0 }).collect();
    while !STOP.load(Ordering::Relaxed) {
        let t = now();
        let wake = dirs.iter().filter_map(Direction::next_wake).min();
        // Wake at least every 100 ms so a signal is never missed for long. The last `spin_ns`
        // before a deadline are polled without sleeping: a sleeping thread wakes up late by
        // up to a few hundred microseconds on a loaded or virtualised host (in virtual time
        // it wakes at the deadline, and polling would stop the clock).
        let wait_ns = wake.map_or(100_000_000, |w| w.0.saturating_sub(t.0).min(100_000_000));
        let wait_ns = if args.virtual_time { wait_ns } else { wait_ns.saturating_sub(spin_ns) };
        let ts = libc::timespec { tv_sec: (wait_ns / 1_000_000_000) as i64, tv_nsec: (wait_ns % 1_000_000_000) as i64 };
        // SAFETY: `pfds` and `ts` are valid for the call.
        let rc = unsafe { libc::ppoll(pfds.as_mut_ptr(), pfds.len() as u64, &ts, std::ptr::null()) };
        if rc < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("ppoll: {}", std::io::Error::last_os_error()));
        }
        // Frames are offered at the kernel's receive time (mapped from the realtime to the
        // monotonic clock), never earlier than a frame already offered, never in the future:
        // "now" is read after the frame is in hand (a frame that arrived while the loop was
        // descheduled after an earlier reading would otherwise be offered before its arrival).
        // In virtual time only clock readings move the clock while the loop works (256 ns
        // each): one reading serves as every frame's arrival time and every departure's, and a
        // socket the poll did not mark holds nothing (both save system calls, which are slow
        // in a User-Mode Linux instance, and keep the loop's own cost off the clock).
        let frozen = args.virtual_time.then(&now);
        let clock = || frozen.unwrap_or_else(&now);
        let real_to_mono = if args.virtual_time { 0 } else { real_to_mono_ns() };
        for d in dirs.iter_mut() {
            if args.virtual_time && (rc <= 0 || pfds[d.from].revents & libc::POLLIN == 0) {
                continue;
            }
            let from = &socks[d.from];
            while let Some((n, stamp)) = from.recv(&mut buf).map_err(|e| format!("recv on {}: {e}", from.ifname))? {
                if n > buf.len() {
                    d.oversized += 1;
                    continue;
                }
                let t = clock();
                let at = match frozen {
                    Some(v) => v.0,
                    None => {
                        stamp.map_or(t.0, |r| (r as i128 - real_to_mono - start as i128).clamp(0, t.0 as i128) as u64)
                    }
                };
                let at = Time(at.max(d.last_offer.0));
                d.last_offer = at;
                d.arrive(at, Frame(buf[..n].to_vec()));
            }
        }
        let t = clock();
        for d in dirs.iter_mut() {
            d.release(t);
            d.hand_over(t, &socks, &mut out, clock)?;
        }
    }
    let end = now();
    for d in dirs.iter_mut() {
        d.socket_drops = socks[d.from].take_drops().map_err(|e| e.to_string())?;
    }
    let stats: Vec<_> = dirs.iter().map(|d| stats_json(d, end)).collect();
    println!("{}", serde_json::json!({ "links": stats, "sched": sched.json() }));
    Ok(())
}

/// Runs the emulator with the command-line arguments `args` (without the program's name)
/// until SIGTERM or SIGINT; returns the exit code (0, or 2 after printing the error).
pub fn main(args: Vec<String>) -> i32 {
    // Die with the process that started us, so a killed run leaves no emulator behind.
    // SAFETY: a plain prctl call.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    }
    match parse_args(args).and_then(run) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("mptcplab-linkemu: error: {e}");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_realtime_emulator_polls_a_tenth_of_a_packets_time_at_most() {
        // 1500 B at 8 Mbit/s: 1.5 ms on the wire, a tenth is 150 µs; at 50 Mbit/s 240 µs and
        // 24 µs; at 1 Mbit/s 12 ms, capped at SPIN_NS (200 µs). The faster direction counts.
        let late = |mbit: u64| Lateness::new(1500, mbit * 1_000_000).late_after;
        assert_eq!(default_spin(true, [late(8), late(8)].into_iter()), 150_000);
        assert_eq!(default_spin(true, [late(2), late(50)].into_iter()), 24_000);
        assert_eq!(default_spin(true, [late(1)].into_iter()), SPIN_NS);
        // A link without a rate is never late: the cap.
        assert_eq!(default_spin(true, [u64::MAX].into_iter()), SPIN_NS);
        // At a normal priority the thread may wake late by far more: SPIN_NS whatever the rate.
        assert_eq!(default_spin(false, [late(50)].into_iter()), SPIN_NS);
    }
}
