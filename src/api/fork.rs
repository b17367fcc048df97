//! Forked children (`RedisModule_Fork`, as BGSAVE forks): a point-in-time copy of the
//! data set that works off the main thread, and the unnamed in-memory file it hands its
//! result back through.

use redis_module::raw;
use std::ffi::{c_int, c_void};
use std::fs::File;
use std::io;
use std::os::fd::FromRawFd;
use std::os::unix::fs::FileExt;

/// Which side of [`fork`] this is.
pub enum Forked {
    /// The child: a copy of the server at the moment of the fork. It must end with
    /// [`exit_from_child`], never return to the server.
    Child,
    /// The server, with the child's pid.
    Parent(i32),
}

/// Why no child was started.
#[derive(Debug)]
pub enum ForkError {
    /// Another child (BGSAVE, an AOF rewrite, a module's) is running: the server runs one
    /// at a time.
    Busy,
    /// The server has no fork API, or `fork` itself failed (its error).
    Failed(io::Error),
}

/// What the server calls, on its main thread, when the child has been reaped:
/// (exit code, signal that killed it or 0).
pub type DoneHandler = fn(i32, i32);

unsafe extern "C" fn fork_done(exitcode: c_int, bysignal: c_int, user_data: *mut c_void) {
    // SAFETY: `fork` passed a `DoneHandler` as the user data.
    let done: DoneHandler = unsafe { std::mem::transmute::<*mut c_void, DoneHandler>(user_data) };
    super::panic::catch_panic("a fork child's done handler", || done(exitcode, bysignal));
}

/// Forks the server (only from a command or another main-thread callback); `done` runs
/// on the main thread once the child has exited and been reaped (not when it was killed
/// with [`kill_child`]).
pub fn fork(done: DoneHandler) -> Result<Forked, ForkError> {
    let Some(fork) = (unsafe { raw::RedisModule_Fork }) else {
        return Err(ForkError::Failed(io::Error::from(
            io::ErrorKind::Unsupported,
        )));
    };
    let pid = unsafe { fork(Some(fork_done), done as *mut c_void) };
    match pid {
        0 => Ok(Forked::Child),
        pid if pid > 0 => Ok(Forked::Parent(pid)),
        _ => {
            let error = io::Error::last_os_error();
            // When a child is already active Redis sets EEXIST, Valkey EALREADY.
            if matches!(error.raw_os_error(), Some(libc::EEXIST | libc::EALREADY)) {
                Err(ForkError::Busy)
            } else {
                Err(ForkError::Failed(error))
            }
        }
    }
}

/// Whether the server's child is a slot migration's snapshot (Valkey 9's
/// `CLUSTER MIGRATESLOTS`: `slot_migration_fork_in_progress:1` in INFO persistence).
pub fn slot_migration_child_running(ctx: &redis_module::Context) -> bool {
    ctx.server_info("persistence")
        .field("slot_migration_fork_in_progress")
        .is_some_and(|v| v.as_slice() == b"1")
}

/// Ends the child with `code` (the server's exit path for children: no atexit handlers,
/// no flushing of the parent's buffers).
pub fn exit_from_child(code: i32) -> ! {
    if let Some(exit) = unsafe { raw::RedisModule_ExitFromChild } {
        unsafe { exit(code) };
    }
    unsafe { libc::_exit(code) }
}

/// Kills the child `pid` and waits for it; its done handler then never runs.
pub fn kill_child(pid: i32) {
    if let Some(kill) = unsafe { raw::RedisModule_KillForkChild } {
        unsafe { kill(pid) };
    }
}

/// An unnamed file in memory (`memfd_create`): nothing on disk, gone with its last
/// descriptor. Made before a fork, both sides hold it; reads and writes are positioned,
/// so the offset the two share does not matter.
pub struct SharedFile(File);

impl SharedFile {
    pub fn new() -> io::Result<SharedFile> {
        let fd = unsafe { libc::memfd_create(c"redbloom".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new descriptor that nothing else owns.
        Ok(SharedFile(unsafe { File::from_raw_fd(fd) }))
    }

    pub fn write_all_at(&self, bytes: &[u8], offset: u64) -> io::Result<()> {
        self.0.write_all_at(bytes, offset)
    }

    pub fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.0.read_exact_at(buf, offset)
    }

    pub fn size(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }
}
