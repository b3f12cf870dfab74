"""Pure domain logic: state in, state out. No I/O, no clock reads, no randomness of its own."""
