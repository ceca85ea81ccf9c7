//! What happens to a packet after the transmitter: losses on the wire, then propagation
//! with its (scheduled) delay and jitter.
//!
//! Packets in propagation sit in one pipe ordered by arrival time (a deque when order is
//! preserved, a heap when jitter may reorder), so the driver needs one pending event per
//! link, not one per packet. A lost packet has used its transmission time.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::net::jitter::{self, Jitter};
use crate::net::loss::LossModel;
use crate::net::params::LinkParams;
use crate::rng::Rng;
use crate::units::{Dur, Time};

/// A packet in a reordering pipe, ordered by (arrival time, sending order).
struct Timed<P>(Time, u64, P);

impl<P> PartialEq for Timed<P> {
    fn eq(&self, o: &Self) -> bool {
        (self.0, self.1) == (o.0, o.1)
    }
}
impl<P> Eq for Timed<P> {}
impl<P> PartialOrd for Timed<P> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<P> Ord for Timed<P> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.0, self.1).cmp(&(o.0, o.1))
    }
}

/// How an order-keeping pipe keeps an item while it propagates in a long pipe: a compact
/// part in the pipe and, for the items that have one, an extra part in a side queue in the
/// same order. A long pipe is written once per item and read once much later (its entries
/// are not in cache either time), so what it costs is the bytes per item; a short one stays
/// in cache and keeps whole items, which the receiver reads where they are.
pub trait Stow: Sized {
    type Compact;
    type Extra;
    /// Gives the item's compact part, after appending its extra part, if any, to `side`.
    fn stow(self, side: &mut VecDeque<Self::Extra>) -> Self::Compact;
    /// Rebuilds an item, taking its extra part, if it was stowed with one, from the front
    /// of `side`.
    fn unstow(c: Self::Compact, side: &mut VecDeque<Self::Extra>) -> Self;
}

/// Bytes of whole entries an order-keeping pipe holds before it stows them: a quarter of
/// a core's second-level cache, so a short pipe stays in cache whole.
const LONG_PIPE_BYTES: usize = 256 * 1024;

/// The items of an order-keeping pipe, in sending order: whole while the pipe is short,
/// stowed ([`Stow`]) once it holds more than [`LONG_PIPE_BYTES`] of whole entries, and whole
/// again once it has emptied. The form changes nothing but the memory used.
enum Fifo<P: Stow> {
    Whole(VecDeque<(Time, P)>),
    /// The items propagating (stowed), the extra parts of those that have one, and the
    /// last item handed over ([`Fifo::due`]), rebuilt.
    Stowed(VecDeque<(Time, P::Compact)>, VecDeque<P::Extra>, Option<P>),
}

impl<P: Stow> Fifo<P> {
    /// Entries a whole pipe holds before it stows them.
    const LONG: usize = {
        let n = LONG_PIPE_BYTES / std::mem::size_of::<(Time, P)>();
        if n == 0 {
            1
        } else {
            n
        }
    };

    #[inline(always)]
    fn push(&mut self, t: Time, p: P) {
        match self {
            Fifo::Whole(q) if q.len() < Self::LONG => q.push_back((t, p)),
            Fifo::Whole(_) => self.stow_all(t, p),
            Fifo::Stowed(q, side, _) => {
                let c = p.stow(side);
                q.push_back((t, c));
            }
        }
    }

    /// The pipe has grown long: its items move to the stowed form, then `p` joins them.
    #[cold]
    #[inline(never)]
    fn stow_all(&mut self, t: Time, p: P) {
        let Fifo::Whole(q) = self else { unreachable!("a whole pipe") };
        let mut side = VecDeque::new();
        let mut stowed = VecDeque::with_capacity(2 * q.len());
        for (at, item) in q.drain(..) {
            stowed.push_back((at, item.stow(&mut side)));
        }
        stowed.push_back((t, p.stow(&mut side)));
        *self = Fifo::Stowed(stowed, side, None);
    }

    #[inline(always)]
    fn head(&self) -> Option<Time> {
        match self {
            Fifo::Whole(q) => q.front().map(|e| e.0),
            Fifo::Stowed(q, ..) => q.front().map(|e| e.0),
        }
    }

    /// The next item, if it has reached the far end by `now`, else when the next one does
    /// (see [`Pipe::due`]).
    #[inline(always)]
    fn due(&mut self, now: Time) -> Result<&mut P, Option<Time>> {
        match self {
            Fifo::Whole(q) => match q.front_mut() {
                Some(e) if e.0 <= now => Ok(&mut e.1),
                e => Err(e.map(|e| e.0)),
            },
            Fifo::Stowed(q, side, landed) => match q.pop_front_if(|e| e.0 <= now) {
                Some((_, c)) => Ok(landed.insert(P::unstow(c, side))),
                None => Err(q.front().map(|e| e.0)),
            },
        }
    }

    /// Drops the item [`Fifo::due`] gave; a stowed pipe that has emptied is whole again.
    #[inline(always)]
    fn discard_due(&mut self) {
        match self {
            Fifo::Whole(q) => {
                q.pop_front();
            }
            Fifo::Stowed(q, ..) => {
                if q.is_empty() {
                    *self = Fifo::Whole(VecDeque::new());
                }
            }
        }
    }

    #[inline]
    fn take_due(&mut self, now: Time) -> Option<P> {
        match self {
            Fifo::Whole(q) => q.pop_front_if(|e| e.0 <= now).map(|e| e.1),
            Fifo::Stowed(q, side, _) => {
                let (_, c) = q.pop_front_if(|e| e.0 <= now)?;
                let p = P::unstow(c, side);
                if q.is_empty() {
                    *self = Fifo::Whole(VecDeque::new());
                }
                Some(p)
            }
        }
    }

    fn len(&self) -> usize {
        match self {
            Fifo::Whole(q) => q.len(),
            Fifo::Stowed(q, ..) => q.len(),
        }
    }
}

/// Packets in propagation, by arrival time (ties in sending order).
///
/// The packets that have reached the far end are handed over one at a time: [`Pipe::land`]
/// bounds how many may be handed over now, and [`Pipe::take_due`] (or [`Pipe::due`]) gives
/// the next one while it has arrived. A packet sent meanwhile arrives later, or at the same
/// time but sent later: it lands behind them, so counting up to the bound leaves it for the
/// next round.
enum Pipe<P: Stow> {
    /// The packets propagating, in sending order.
    Fifo(Fifo<P>),
    /// The heap of packets propagating, the sending order, and the packets that reached the
    /// far end, taken out of the heap in arrival order by [`Pipe::land`].
    Reorder(BinaryHeap<Reverse<Timed<P>>>, u64, VecDeque<(Time, P)>),
}

impl<P: Stow> Pipe<P> {
    #[inline(always)]
    fn push(&mut self, t: Time, p: P) {
        match self {
            Pipe::Fifo(q) => q.push(t, p),
            Pipe::Reorder(h, n, _) => Self::push_heap(h, n, t, p),
        }
    }
    /// The reordering pipe's push, kept out of line so that the order-keeping pipe's is
    /// small enough to be inlined where a link takes a packet.
    #[inline(never)]
    fn push_heap(h: &mut BinaryHeap<Reverse<Timed<P>>>, n: &mut u64, t: Time, p: P) {
        *n += 1;
        h.push(Reverse(Timed(t, *n, p)));
    }
    #[inline(always)]
    fn head(&self) -> Option<Time> {
        match self {
            Pipe::Fifo(q) => q.head(),
            Pipe::Reorder(h, _, landed) => landed.front().map(|e| e.0).or_else(|| h.peek().map(|e| e.0 .0)),
        }
    }
    /// At most how many packets reach the far end by `now`, before anything else is sent:
    /// the packets in an order-keeping pipe (those due are the first ones), or exactly the
    /// packets due (moved out of the heap of a reordering pipe).
    #[inline]
    fn land(&mut self, now: Time) -> usize {
        match self {
            Pipe::Fifo(q) => q.len(),
            Pipe::Reorder(h, _, landed) => {
                while h.peek().is_some_and(|e| e.0 .0 <= now) {
                    let Reverse(Timed(t, _, p)) = h.pop().expect("peeked");
                    landed.push_back((t, p));
                }
                landed.len()
            }
        }
    }
    /// The next packet, if it has reached the far end by `now`, where the receiver reads
    /// it: in the pipe when it keeps packets whole, else rebuilt beside it. The receiver then
    /// calls [`Pipe::discard_due`] before anything is sent into the pipe. If none is due:
    /// when the next one is ([`Pipe::head`]).
    #[inline(always)]
    fn due(&mut self, now: Time) -> Result<&mut P, Option<Time>> {
        match self {
            Pipe::Fifo(q) => q.due(now),
            Pipe::Reorder(h, _, landed) => match landed.front_mut() {
                Some(e) if e.0 <= now => Ok(&mut e.1),
                Some(e) => Err(Some(e.0)),
                None => Err(h.peek().map(|e| e.0 .0)),
            },
        }
    }
    /// Drops the packet [`Pipe::due`] gave.
    #[inline(always)]
    fn discard_due(&mut self) {
        match self {
            Pipe::Fifo(q) => q.discard_due(),
            Pipe::Reorder(_, _, landed) => {
                landed.pop_front();
            }
        }
    }
    /// Takes the next packet, if it has reached the far end by `now`.
    #[inline]
    fn take_due(&mut self, now: Time) -> Option<P> {
        match self {
            Pipe::Fifo(q) => q.take_due(now),
            Pipe::Reorder(_, _, landed) => landed.pop_front_if(|e| e.0 <= now).map(|e| e.1),
        }
    }
    fn len(&self) -> usize {
        match self {
            Pipe::Fifo(q) => q.len(),
            Pipe::Reorder(h, _, landed) => h.len() + landed.len(),
        }
    }
}

/// A piecewise-constant value over (possibly periodic) time.
struct Steps<T: Copy> {
    at: Vec<Dur>,
    v: Vec<T>,
    period: Option<Dur>,
}

impl<T: Copy> Steps<T> {
    fn get(&self, t: Time) -> T {
        if self.v.len() == 1 {
            return self.v[0];
        }
        let off = match self.period {
            Some(p) if p.0 > 0 => Dur(t.0 % p.0),
            _ => Dur(t.0),
        };
        self.v[self.at.partition_point(|a| *a <= off).saturating_sub(1)]
    }
}

/// The wire of one link: losses, delay, jitter and the packets propagating.
pub(crate) struct Wire<P: Stow> {
    pipe: Pipe<P>,
    loss: LossModel,
    loss_rate: Steps<f64>,
    delay: Steps<Dur>,
    jitter: Option<Jitter>,
    jitter_rng: Rng,
    /// Arrival of the last packet sent (order-keeping pipes never deliver before it).
    last_arrival: Time,
    /// No packet can be lost: every scheduled loss rate is zero and no drop is listed (the
    /// loss model is then never consulted; it would neither lose nor draw).
    lossless: bool,
}

impl<P: Stow> Wire<P> {
    pub(crate) fn new(name: &str, params: &LinkParams, seed: u64) -> Wire<P> {
        let loss =
            LossModel::new(Rng::stream(seed, &format!("link:{name}:loss")), params.loss_burst, params.drop.clone());
        let jitter_rng = Rng::stream(seed, &format!("link:{name}:jitter"));
        let reorder = params.jitter.as_ref().is_some_and(|j| j.reorder);
        let pipe = if reorder {
            Pipe::Reorder(BinaryHeap::new(), 0, VecDeque::new())
        } else {
            Pipe::Fifo(Fifo::Whole(VecDeque::new()))
        };
        let mut delay = Steps { at: vec![Dur::ZERO], v: vec![params.delay], period: params.schedule_period };
        let mut loss_rate = Steps { at: vec![Dur::ZERO], v: vec![params.loss], period: params.schedule_period };
        for s in &params.schedule {
            if let Some(d) = s.delay {
                delay.at.push(s.at);
                delay.v.push(d);
            }
            if let Some(l) = s.loss {
                loss_rate.at.push(s.at);
                loss_rate.v.push(l);
            }
        }
        let lossless = loss_rate.v.iter().all(|&r| r <= 0.0) && params.drop.is_empty();
        Wire { pipe, loss, loss_rate, delay, jitter: params.jitter, jitter_rng, last_arrival: Time::ZERO, lossless }
    }

    /// Whether the `ordinal`-th packet offered to the link, whose transmission starts at
    /// `start`, is lost on the wire.
    #[inline]
    pub(crate) fn lose(&mut self, ordinal: u64, start: Time) -> bool {
        !self.lossless && self.loss.lose(ordinal, self.loss_rate.get(start))
    }

    /// The one delay of a plain wire: it loses nothing, has no jitter, keeps order and its
    /// delay never changes ([`Wire::send_plain`]).
    pub(crate) fn plain_delay(&self) -> Option<Dur> {
        let plain = self.lossless && self.jitter.is_none() && self.keeps_order() && self.delay.v.len() == 1;
        plain.then(|| self.delay.v[0])
    }

    /// [`Wire::send`] on a plain wire whose delay is `delay` ([`Wire::plain_delay`]): the
    /// arrival without the schedule's, the jitter's and the pipe's questions.
    #[inline(always)]
    pub(crate) fn send_plain(&mut self, end: Time, delay: Dur, p: P) {
        let t = (end + delay).max(self.last_arrival);
        self.last_arrival = t;
        match &mut self.pipe {
            Pipe::Fifo(q) => q.push(t, p),
            Pipe::Reorder(..) => unreachable!("a plain wire keeps order"),
        }
    }

    /// Puts a packet whose transmission ends at `end` on the wire.
    #[inline(always)]
    pub(crate) fn send(&mut self, end: Time, p: P) {
        let t = self.arrival(end);
        self.pipe.push(t, p);
    }

    /// Arrival at the far end of a packet whose transmission ends at `end`.
    #[inline]
    fn arrival(&mut self, end: Time) -> Time {
        let delay = self.delay.get(end);
        let mut t = match &self.jitter {
            None => end + delay,
            Some(j) => {
                let d = delay.0 as f64 + j.amount.0 as f64 * jitter::draw(j.distribution, &mut self.jitter_rng);
                end + Dur(d.max(0.0) as u64)
            }
        };
        if matches!(self.pipe, Pipe::Fifo(..)) {
            t = t.max(self.last_arrival); // order-preserving jitter
            self.last_arrival = t;
        }
        t
    }

    /// When the next packet reaches the far end.
    #[inline(always)]
    pub(crate) fn head(&self) -> Option<Time> {
        self.pipe.head()
    }

    /// At most how many packets reach the far end by `now` ([`Pipe::land`]).
    #[inline]
    pub(crate) fn land(&mut self, now: Time) -> usize {
        self.pipe.land(now)
    }

    /// Takes the next packet to reach the far end, if it has by `now`.
    #[inline]
    pub(crate) fn take_due(&mut self, now: Time) -> Option<P> {
        self.pipe.take_due(now)
    }

    /// The next packet to reach the far end, if it has by `now`, else when the next one
    /// does ([`Pipe::due`]).
    #[inline(always)]
    pub(crate) fn due(&mut self, now: Time) -> Result<&mut P, Option<Time>> {
        self.pipe.due(now)
    }

    /// Drops the packet [`Wire::due`] gave.
    #[inline(always)]
    pub(crate) fn discard_due(&mut self) {
        self.pipe.discard_due()
    }

    /// Whether the pipe keeps sending order (a packet never lands before one sent earlier).
    pub(crate) fn keeps_order(&self) -> bool {
        matches!(self.pipe, Pipe::Fifo(..))
    }

    /// Packets propagating.
    pub(crate) fn len(&self) -> usize {
        self.pipe.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Packet;
    use crate::units::Seq;

    fn packet(uid: u64) -> Packet {
        let mut p = Packet {
            uid,
            conn: 0,
            subflow: 0,
            to_server: false,
            hop: 0,
            flags: 0,
            mp: Default::default(),
            wire_len: 1500,
            payload: 1448,
            seq: Seq(uid * 1448),
            ack: Seq(7),
            wnd: 0,
            sack: Default::default(),
            dsn: Default::default(),
            data_ack: Default::default(),
            ack64: false,
            sent_at: Time(uid),
            ts_echo: Time::ZERO,
        };
        if uid.is_multiple_of(3) {
            p.sack.push(p.ack, (Seq(100 + uid), Seq(200 + uid)));
        }
        p
    }

    /// A pipe that grows past the whole form's length stows its packets and gives them back
    /// unchanged and in order (taken out or read in place), then keeps whole packets again
    /// once it has emptied.
    #[test]
    fn a_pipe_gives_back_the_same_packets_across_its_forms() {
        let long = Fifo::<Packet>::LONG as u64;
        let mut f: Fifo<Packet> = Fifo::Whole(VecDeque::new());
        let (mut next_in, mut next_out) = (0, 0);
        for round in 0..4u32 {
            // Fill past the threshold, drain half, refill, then drain all.
            for target in [long + 10, long / 2, long + 100, 0] {
                while f.len() as u64 != target {
                    if (f.len() as u64) < target {
                        f.push(Time(next_in), packet(next_in));
                        next_in += 1;
                    } else if round.is_multiple_of(2) {
                        assert_eq!(f.take_due(Time(next_out)), Some(packet(next_out)), "round {round}");
                        next_out += 1;
                    } else {
                        assert_eq!(f.due(Time(next_out)).copied(), Ok(packet(next_out)), "round {round}");
                        f.discard_due();
                        next_out += 1;
                    }
                }
                assert_eq!(matches!(f, Fifo::Stowed(..)), target > 0, "round {round}, {target} packets");
            }
            assert!(f.due(Time::MAX) == Err(None) && f.take_due(Time::MAX).is_none());
        }
    }
}
