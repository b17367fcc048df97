//! SIGINT and SIGTERM while a load or an add reads its input or ships: the first one sets
//! a flag the input reader checks between reads and the ship checks between chunks (the load then removes its temporary keys, leaves every target as it was
//! and exits with 128 + the signal's number: 130, 143); a second one ends the process at
//! once, as without this. Before [`catch`] the signals keep their default action.

use signal_hook::consts::{SIGINT, SIGTERM};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

struct Flags {
    stop: Arc<AtomicBool>,
    which: Arc<AtomicUsize>,
}

static FLAGS: OnceLock<Flags> = OnceLock::new();

/// Starts catching SIGINT and SIGTERM (from here to the end of the process).
pub fn catch() {
    FLAGS.get_or_init(|| {
        let flags = Flags {
            stop: Arc::new(AtomicBool::new(false)),
            which: Arc::new(AtomicUsize::new(0)),
        };
        for signal in [SIGINT, SIGTERM] {
            // Registration fails only for signals that cannot be caught; these can.
            let _ =
                signal_hook::flag::register_conditional_default(signal, Arc::clone(&flags.stop));
            let _ = signal_hook::flag::register_usize(
                signal,
                Arc::clone(&flags.which),
                signal as usize,
            );
            let _ = signal_hook::flag::register(signal, Arc::clone(&flags.stop));
        }
        flags
    });
}

/// Whether a caught signal asks to stop.
pub fn stopped() -> bool {
    FLAGS.get().is_some_and(|f| f.stop.load(Ordering::SeqCst))
}

/// The caught signal's name (SIGINT when none was).
pub fn name() -> &'static str {
    let signal = FLAGS.get().map_or(0, |f| f.which.load(Ordering::SeqCst));
    if signal == SIGTERM as usize {
        "SIGTERM"
    } else {
        "SIGINT"
    }
}

/// The exit code of a run stopped by a signal: 128 + its number.
pub fn exit_code() -> u8 {
    let signal = FLAGS.get().map_or(0, |f| f.which.load(Ordering::SeqCst));
    128 + if signal == 0 {
        SIGINT as u8
    } else {
        signal as u8
    }
}
