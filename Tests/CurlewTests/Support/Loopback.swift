/// An address where every connection attempt is refused: port 1 is privileged and no test binds
/// it. A loopback server's port after `shutdown()` is not one — parallel tests can be given the
/// same port a moment later, and then a connect is accepted or reset instead of refused.
let refusingBaseURL = "http://127.0.0.1:1"
