"""The ``uml`` backend: the Linux MPTCP stack of a User-Mode Linux kernel in deterministic
virtual time (:mod:`mptcplab.kernel.uml.backend`), its kernel (:mod:`.kernel`, built by
``scripts/setup-uml.sh``) and its program inside the instance (:mod:`.guest`)."""
