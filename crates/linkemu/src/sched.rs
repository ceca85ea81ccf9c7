//! How the emulator's thread is scheduled: at a real-time priority (`SCHED_FIFO`) and on one
//! CPU where asked, so that the two kernel stacks and their applications, which share the
//! machine with it, cannot delay a frame's hand-over by a scheduler time slice.
//!
//! A `SCHED_FIFO` thread runs whenever it is runnable, ahead of every normal thread on its
//! CPU (`sched(7)`); the emulator sleeps between deadlines, so it takes the CPU only to hand
//! frames over and for the short time before each deadline it polls (a tenth of a full-size
//! packet's time at most at this priority: `default_spin` in the crate root). Linux
//! bounds what real-time threads may take (`sched_rt_runtime_us` of `sched_rt_period_us`, 95 %
//! by default), so a runaway emulator cannot lock a CPU. Pinning (`sched_setaffinity`) keeps
//! the thread off the CPU migration path, whose cost would show up as lateness.
//!
//! A request the kernel refuses (no `CAP_SYS_NICE`, a cgroup without real-time runtime, a CPU
//! that does not exist or is not allowed) is not an error: the emulator runs as it can, and
//! the report says what was refused and why, so that a run's data show how it was measured.

use std::io;

/// What the emulator asked for and what it got.
pub struct SchedReport {
    pub fifo: Option<i32>,
    pub cpu: Option<usize>,
    /// Each refused request and the kernel's reason.
    pub refused: Vec<String>,
    /// How long before each deadline the loop polls (ns; set by the caller).
    pub spin_ns: u64,
}

/// Applies the priority and CPU (each optional) to the calling thread.
pub fn apply(fifo: Option<i32>, cpu: Option<usize>) -> SchedReport {
    let mut report = SchedReport { fifo: None, cpu: None, refused: Vec::new(), spin_ns: 0 };
    if let Some(c) = cpu {
        match pin(c) {
            Ok(()) => report.cpu = Some(c),
            Err(e) => report.refused.push(format!("CPU {c}: {e}")),
        }
    }
    if let Some(p) = fifo {
        let param = libc::sched_param { sched_priority: p };
        // SAFETY: `param` is valid for the call; 0 is the calling thread.
        match unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } {
            0 => report.fifo = Some(p),
            _ => report.refused.push(format!("SCHED_FIFO priority {p}: {}", io::Error::last_os_error())),
        }
    }
    report
}

fn pin(cpu: usize) -> io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::other("beyond the largest CPU set"));
    }
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET stays within it (checked above).
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    match rc {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

impl SchedReport {
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "policy": if self.fifo.is_some() { "SCHED_FIFO" } else { "SCHED_OTHER" },
            "priority": self.fifo.unwrap_or(0),
            "cpu": self.cpu,
            "refused": if self.refused.is_empty() { None } else { Some(self.refused.join("; ")) },
            "spin_s": self.spin_ns as f64 / 1e9,
        })
    }
}
