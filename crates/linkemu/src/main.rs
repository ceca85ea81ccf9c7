//! `mptcplab-linkemu`: the link emulator as a program of its own (the Python package runs the
//! same code from its extension module: `python -m mptcplab.kernel.linkemu`).

fn main() {
    std::process::exit(mptcplab_linkemu::main(std::env::args().skip(1).collect()));
}
