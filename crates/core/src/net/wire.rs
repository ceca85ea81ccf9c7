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

/// How an order-keeping pipe keeps an item while it propagates: a compact part in the pipe
/// and, for the items that have one, an extra part in a side queue in the same order. A
/// long pipe is written once per item and read once much later (its entries are not in
/// cache either time), so what it costs is the bytes per item.
pub trait Stow: Sized {
    type Compact;
    type Extra;
    /// Gives the item's compact part, after appending its extra part, if any, to `side`.
    fn stow(self, side: &mut VecDeque<Self::Extra>) -> Self::Compact;
    /// Rebuilds an item, taking its extra part, if it was stowed with one, from the front
    /// of `side`.
    fn unstow(c: Self::Compact, side: &mut VecDeque<Self::Extra>) -> Self;
}

/// Packets in propagation, by arrival time (ties in sending order).
///
/// The packets that have reached the far end are handed over one at a time: [`Pipe::land`]
/// bounds how many may be handed over now, and [`Pipe::take_due`] gives the next one while
/// it has arrived. A packet sent meanwhile arrives later, or at the same time but sent
/// later: it lands behind them, so counting up to the bound leaves it for the next round.
enum Pipe<P: Stow> {
    /// The packets propagating (stowed), and the extra parts of those that have one.
    Fifo(VecDeque<(Time, P::Compact)>, VecDeque<P::Extra>),
    /// The heap of packets propagating, the sending order, and the packets that reached the
    /// far end, taken out of the heap in arrival order by [`Pipe::land`].
    Reorder(BinaryHeap<Reverse<Timed<P>>>, u64, VecDeque<(Time, P)>),
}

impl<P: Stow> Pipe<P> {
    #[inline(always)]
    fn push(&mut self, t: Time, p: P) {
        match self {
            Pipe::Fifo(q, side) => {
                let c = p.stow(side);
                q.push_back((t, c));
            }
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
    #[inline]
    fn head(&self) -> Option<Time> {
        match self {
            Pipe::Fifo(q, _) => q.front().map(|e| e.0),
            Pipe::Reorder(h, _, landed) => landed.front().map(|e| e.0).or_else(|| h.peek().map(|e| e.0 .0)),
        }
    }
    /// At most how many packets reach the far end by `now`, before anything else is sent:
    /// the packets in an order-keeping pipe (those due are the first ones), or exactly the
    /// packets due (moved out of the heap of a reordering pipe).
    #[inline]
    fn land(&mut self, now: Time) -> usize {
        match self {
            Pipe::Fifo(q, _) => q.len(),
            Pipe::Reorder(h, _, landed) => {
                while h.peek().is_some_and(|e| e.0 .0 <= now) {
                    let Reverse(Timed(t, _, p)) = h.pop().expect("peeked");
                    landed.push_back((t, p));
                }
                landed.len()
            }
        }
    }
    /// Takes the next packet, if it has reached the far end by `now`.
    #[inline]
    fn take_due(&mut self, now: Time) -> Option<P> {
        match self {
            Pipe::Fifo(q, side) => {
                let (_, c) = q.pop_front_if(|e| e.0 <= now)?;
                Some(P::unstow(c, side))
            }
            Pipe::Reorder(_, _, landed) => landed.pop_front_if(|e| e.0 <= now).map(|e| e.1),
        }
    }
    fn len(&self) -> usize {
        match self {
            Pipe::Fifo(q, _) => q.len(),
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
            Pipe::Fifo(VecDeque::new(), VecDeque::new())
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
    #[inline]
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

    /// Whether the pipe keeps sending order (a packet never lands before one sent earlier).
    pub(crate) fn keeps_order(&self) -> bool {
        matches!(self.pipe, Pipe::Fifo(..))
    }

    /// Packets propagating.
    pub(crate) fn len(&self) -> usize {
        self.pipe.len()
    }
}
