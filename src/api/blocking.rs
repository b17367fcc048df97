//! Blocked clients (`RedisModule_BlockClient`): a command whose answer comes later, from
//! work done elsewhere (a forked child), while the server serves other clients.

use super::commands::write_reply;
use super::panic::catch_panic;
use crate::errors;
use redis_module::{raw, Context, ContextFlags, RedisError, RedisResult};
use std::ffi::{c_int, c_void};
use std::marker::PhantomData;
use std::ptr;

/// The answer of a blocked command, given on the main thread.
pub trait Answer: Send + Sized + 'static {
    /// Writes the reply (the client is still connected); may change keys, replicate and
    /// notify as a command does.
    fn answer(self, ctx: &Context) -> RedisResult;
    /// The client `id` disconnected before its answer: stop the work behind it, then
    /// [`Blocked::abandon`] it (Redis frees a blocked client only when it is unblocked).
    fn disconnected(id: BlockedId);
}

/// A blocked client's identity, to tell which one disconnected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockedId(usize);

/// A client blocked until [`Blocked::answer`] (or [`Blocked::abandon`]).
pub struct Blocked<A: Answer> {
    bc: *mut raw::RedisModuleBlockedClient,
    answer: PhantomData<fn(A)>,
}

// SAFETY: RedisModule_UnblockClient is thread-safe; the handle is otherwise only moved.
unsafe impl<A: Answer> Send for Blocked<A> {}

/// Whether the command running in `ctx` may block its client: not inside MULTI/EXEC or a
/// script, nor where the server denies blocking (a replica's master stream, AOF loading).
pub fn can_block(ctx: &Context) -> bool {
    !ctx.get_flags().intersects(
        ContextFlags::MULTI
            | ContextFlags::LUA
            | ContextFlags::DENY_BLOCKING
            | ContextFlags::REPLICATED
            | ContextFlags::LOADING,
    )
}

unsafe extern "C" fn reply_callback<A: Answer>(
    ctx: *mut raw::RedisModuleCtx,
    _argv: *mut *mut raw::RedisModuleString,
    _argc: c_int,
) -> c_int {
    let context = Context::new(ctx);
    let data = unsafe { raw::RedisModule_GetBlockedClientPrivateData.unwrap()(ctx) };
    let taken = unsafe { data.cast::<Option<A>>().as_mut() }.and_then(Option::take);
    let reply = match taken {
        Some(answer) => catch_panic("a blocked command's answer", || answer.answer(&context))
            .unwrap_or(Err(RedisError::Str(errors::INTERNAL_ERROR))),
        None => Err(RedisError::Str(errors::INTERNAL_ERROR)),
    };
    write_reply(&context, reply)
}

unsafe extern "C" fn free_data<A: Answer>(_ctx: *mut raw::RedisModuleCtx, data: *mut c_void) {
    if !data.is_null() {
        drop(unsafe { Box::from_raw(data.cast::<Option<A>>()) });
    }
}

unsafe extern "C" fn on_disconnect<A: Answer>(
    _ctx: *mut raw::RedisModuleCtx,
    bc: *mut raw::RedisModuleBlockedClient,
) {
    catch_panic("a blocked client's disconnection", || {
        A::disconnected(BlockedId(bc as usize))
    });
}

/// Blocks the client of the command running in `ctx` (check [`can_block`] first), with
/// no timeout.
pub fn block<A: Answer>(ctx: &Context) -> Blocked<A> {
    let bc = unsafe {
        raw::RedisModule_BlockClient.unwrap()(
            ctx.ctx,
            Some(reply_callback::<A>),
            None,
            Some(free_data::<A>),
            0,
        )
    };
    if let Some(set) = unsafe { raw::RedisModule_SetDisconnectCallback } {
        unsafe { set(bc, Some(on_disconnect::<A>)) };
    }
    Blocked {
        bc,
        answer: PhantomData,
    }
}

impl<A: Answer> Blocked<A> {
    pub fn id(&self) -> BlockedId {
        BlockedId(self.bc as usize)
    }

    /// Unblocks the client: `answer` replies on the main thread (and is dropped unused if
    /// the client has gone). Callable from any thread.
    pub fn answer(mut self, answer: A) {
        let data = Box::into_raw(Box::new(Some(answer)));
        unsafe { raw::RedisModule_UnblockClient.unwrap()(self.bc, data.cast()) };
        self.bc = ptr::null_mut();
    }

    /// Unblocks a client that disconnected, with no answer.
    pub fn abandon(self) {
        drop(self);
    }
}

/// A client dropped unanswered is unblocked all the same (a connected one then gets
/// `ERR internal error`): Redis frees a blocked client only when it is unblocked.
impl<A: Answer> Drop for Blocked<A> {
    fn drop(&mut self) {
        if !self.bc.is_null() {
            unsafe { raw::RedisModule_UnblockClient.unwrap()(self.bc, ptr::null_mut()) };
        }
    }
}
