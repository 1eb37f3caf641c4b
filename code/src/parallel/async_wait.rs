//! What async is for: waiting, not computing.
//!
//! A *future* is a value that can be asked "are you done?" (`poll`). When it is not, it
//! keeps a *waker*, and calls it once progress is possible; until then, nobody needs to
//! ask again. An *executor* is the loop that polls futures and sleeps in between. This file
//! holds a whole executor in a few lines ([`block_on`]), two futures that wait for
//! something outside the program (a timer, a signal from another thread), and [`join_all`],
//! which waits for many futures at once on one thread.
//!
//! None of it makes arithmetic faster: an `async fn` that only computes runs exactly like
//! the plain function, with the bookkeeping on top.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

// ANCHOR: block_on
/// A waker that wakes a parked thread.
struct ThreadWaker(std::thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `future` to completion on this thread: poll it; if it is not ready, park the thread
/// (sleep without using the CPU) until its waker unparks it; poll again.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        // `park` may also return without an `unpark` (a "spurious wakeup"); polling once
        // more then finds the future still pending, and we park again.
        std::thread::park();
    }
}
// ANCHOR_END: block_on

/// What a waiting future and the thing it waits for share.
#[derive(Default)]
struct Shared {
    done: bool,
    waker: Option<Waker>,
}

/// Marks `shared` done and wakes whoever polled it last.
fn complete(shared: &Mutex<Shared>) {
    let waker = {
        let mut state = shared
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        state.done = true;
        state.waker.take()
    };
    if let Some(waker) = waker {
        waker.wake();
    }
}

/// Ready once `shared` is done; otherwise keeps the latest waker and says "pending".
fn poll_shared(shared: &Mutex<Shared>, context: &mut Context<'_>) -> Poll<()> {
    let mut state = shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if state.done {
        Poll::Ready(())
    } else {
        state.waker = Some(context.waker().clone());
        Poll::Pending
    }
}

// ANCHOR: sleep
/// A future that is ready `duration` after it was first polled. A helper thread does the
/// waiting (a real runtime has one timer for all of them); the future itself costs nothing
/// while it waits.
pub struct Sleep {
    duration: Duration,
    shared: Option<Arc<Mutex<Shared>>>,
}

pub fn sleep(duration: Duration) -> Sleep {
    Sleep {
        duration,
        shared: None,
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        let duration = self.duration;
        let shared = self.shared.get_or_insert_with(|| {
            let shared = Arc::new(Mutex::new(Shared::default()));
            let timer = Arc::clone(&shared);
            std::thread::spawn(move || {
                std::thread::sleep(duration);
                complete(&timer);
            });
            shared
        });
        poll_shared(shared, context)
    }
}
// ANCHOR_END: sleep

/// A future that is ready once another thread calls [`Trigger::fire`]: a one-shot signal,
/// the shape of "the GPU has finished" or "the file has arrived".
pub struct Signalled(Arc<Mutex<Shared>>);

/// The sending end of a one-shot signal.
pub struct Trigger(Arc<Mutex<Shared>>);

pub fn signal() -> (Trigger, Signalled) {
    let shared = Arc::new(Mutex::new(Shared::default()));
    (Trigger(Arc::clone(&shared)), Signalled(shared))
}

impl Trigger {
    pub fn fire(self) {
        complete(&self.0);
    }
}

impl Future for Signalled {
    type Output = ();

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        poll_shared(&self.0, context)
    }
}

// ANCHOR: join_all
/// A boxed future, so that futures of different types can wait side by side.
pub type Task<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Waits for every future of `tasks` at once and returns their outputs in the order of
/// `tasks`. Each time it is polled, it polls the futures that are not yet done; all of them
/// share one waker, so any one of them becoming ready gets the whole group polled again.
pub async fn join_all<T>(tasks: Vec<Task<'_, T>>) -> Vec<T> {
    let mut tasks: Vec<Option<Task<'_, T>>> = tasks.into_iter().map(Some).collect();
    let mut outputs: Vec<Option<T>> = tasks.iter().map(|_| None).collect();
    std::future::poll_fn(move |context| {
        for (task, output) in tasks.iter_mut().zip(outputs.iter_mut()) {
            let Some(future) = task else {
                continue; // finished already: a finished future must not be polled again
            };
            if let Poll::Ready(value) = future.as_mut().poll(context) {
                *output = Some(value);
                *task = None;
            }
        }
        if tasks.iter().all(Option::is_none) {
            Poll::Ready(outputs.iter_mut().filter_map(Option::take).collect())
        } else {
            Poll::Pending
        }
    })
    .await
}
// ANCHOR_END: join_all

// ANCHOR: waiting
/// Waits `count` times for `pause`, one wait after the other: `count × pause` in all.
pub async fn wait_one_after_another(count: usize, pause: Duration) {
    for _ in 0..count {
        sleep(pause).await;
    }
}

/// Waits `count` times for `pause`, all at once, on this one thread: about `pause` in all.
pub async fn wait_all_at_once(count: usize, pause: Duration) {
    let waits: Vec<Task<'_, ()>> = (0..count)
        .map(|_| Box::pin(sleep(pause)) as Task<'_, ()>)
        .collect();
    join_all(waits).await;
}
// ANCHOR_END: waiting

// ANCHOR: arithmetic
/// Plain arithmetic: `rounds` steps of a bit-mixing function, each depending on the last
/// (so the compiler can neither skip nor reorder them).
pub fn mix_repeatedly(seed: u64, rounds: u64) -> u64 {
    (0..rounds).fold(seed, |state, round| {
        let mixed = (state ^ (state >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        mixed ^ round
    })
}

/// The same arithmetic in an `async fn`. It never waits, so it is ready at its first poll:
/// `block_on(mix_repeatedly_async(seed, n))` does the work of `mix_repeatedly(seed, n)`
/// and a little more, and no executor can make it faster.
pub async fn mix_repeatedly_async(seed: u64, rounds: u64) -> u64 {
    mix_repeatedly(seed, rounds)
}
// ANCHOR_END: arithmetic

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_on_returns_what_the_future_computes() {
        assert_eq!(block_on(async { 6 * 7 }), 42);
        assert_eq!(
            block_on(mix_repeatedly_async(7, 1000)),
            mix_repeatedly(7, 1000)
        );
        assert_eq!(mix_repeatedly(7, 0), 7);
        assert_ne!(mix_repeatedly(7, 1000), mix_repeatedly(8, 1000));
    }

    #[test]
    fn a_signal_fired_from_another_thread_completes_the_wait() {
        let (trigger, signalled) = signal();
        let firing = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            trigger.fire();
        });
        block_on(signalled);
        firing.join().unwrap();
    }

    #[test]
    fn join_all_finishes_futures_in_the_order_their_signals_fire() {
        // Three waits on one thread; the signals fire in the order 2, 0, 1. If `join_all`
        // waited for one future after the other, task 0 would finish first.
        let finished: Arc<Mutex<Vec<usize>>> = Arc::default();
        let mut triggers = Vec::new();
        let mut tasks: Vec<Task<'_, usize>> = Vec::new();
        for index in 0..3 {
            let (trigger, signalled) = signal();
            triggers.push(Some(trigger));
            let finished = Arc::clone(&finished);
            tasks.push(Box::pin(async move {
                signalled.await;
                finished.lock().unwrap().push(index);
                index * 10
            }));
        }
        let seen = Arc::clone(&finished);
        let firing = std::thread::spawn(move || {
            for (step, index) in [2, 0, 1].into_iter().enumerate() {
                if let Some(trigger) = triggers[index].take() {
                    trigger.fire();
                }
                // Fire the next only once the executor has finished this one, so that the
                // order of finishing is the order of firing, however busy the machine is.
                // (After ten seconds fire it anyway: the assertion below then fails
                // instead of the test hanging.)
                let deadline = std::time::Instant::now() + Duration::from_secs(10);
                while seen.lock().unwrap().len() <= step && std::time::Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        });
        let outputs = block_on(join_all(tasks));
        firing.join().unwrap();
        assert_eq!(
            outputs,
            [0, 10, 20],
            "outputs come back in the order of the tasks"
        );
        let order = finished.lock().unwrap().clone();
        assert_eq!(
            order,
            [2, 0, 1],
            "each task finishes when its own signal fires"
        );
    }

    #[test]
    fn sleeps_and_empty_groups_complete() {
        block_on(sleep(Duration::from_millis(1)));
        block_on(wait_all_at_once(4, Duration::from_millis(1)));
        block_on(wait_one_after_another(2, Duration::from_millis(1)));
        assert!(block_on(join_all::<u8>(Vec::new())).is_empty());
    }
}
