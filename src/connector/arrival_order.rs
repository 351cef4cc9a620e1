//! Side-effecting calls of one channel run one at a time **in the order they arrived** (Device
//! Profile §5 serialises them; an agent that sends tap, type, enter without waiting for the acks
//! means that order). A lock is not enough: each call runs in its own task, and which task
//! reaches a lock first is up to the scheduler (tokio's LIFO slot runs the newest task first),
//! so calls sent back-to-back ran in a shuffled order. Instead the session takes a [`Ticket`]
//! while it reads the packets, in order, and a call waits until every earlier ticket of its
//! channel has run or been dropped.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

/// The arrival order of one channel's side-effecting calls.
pub struct ArrivalOrder {
    tickets: Mutex<Tickets>,
    /// The ticket whose turn it is.
    serving: watch::Sender<u64>,
}

#[derive(Default)]
struct Tickets {
    /// The next ticket to hand out.
    next: u64,
    /// Tickets finished out of turn (dropped before their turn came), waiting for the ones
    /// before them.
    finished: BTreeSet<u64>,
}

impl Default for ArrivalOrder {
    fn default() -> Self {
        Self {
            tickets: Mutex::default(),
            serving: watch::channel(0).0,
        }
    }
}

impl ArrivalOrder {
    /// Hands out the next ticket. Call it where the packets are read, in their order.
    pub fn ticket(self: &Arc<Self>) -> Ticket {
        let mut t = self.tickets.lock().unwrap_or_else(|e| e.into_inner());
        let number = t.next;
        t.next += 1;
        Ticket {
            order: Arc::clone(self),
            number,
        }
    }

    /// Marks `number` finished and moves the turn past every finished ticket.
    fn finish(&self, number: u64) {
        let mut t = self.tickets.lock().unwrap_or_else(|e| e.into_inner());
        t.finished.insert(number);
        let mut serving = *self.serving.borrow();
        while t.finished.remove(&serving) {
            serving += 1;
        }
        self.serving.send_replace(serving);
    }
}

/// A call's place in its channel's arrival order. Its turn ends when it is dropped (whether it
/// ran, failed early, or was abandoned), so a call that never runs never holds up the rest.
pub struct Ticket {
    order: Arc<ArrivalOrder>,
    number: u64,
}

impl Ticket {
    /// Waits until every earlier ticket of the channel has finished.
    pub async fn turn(&self) {
        let mut serving = self.order.serving.subscribe();
        // The sender lives in `order`, which this ticket keeps alive: never closed.
        let _ = serving.wait_for(|s| *s >= self.number).await;
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.order.finish(self.number);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Tickets taken in order run in that order, however the tasks are scheduled; a ticket
    /// dropped without running does not block the ones after it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn turns_follow_the_ticket_order() {
        let order = Arc::new(ArrivalOrder::default());
        let ran = Arc::new(Mutex::new(Vec::new()));
        let tickets: Vec<Ticket> = (0..8).map(|_| order.ticket()).collect();
        let mut tasks = Vec::new();
        // Spawned newest first, so the scheduler's own order would be reversed.
        for (i, ticket) in tickets.into_iter().enumerate().rev() {
            let ran = Arc::clone(&ran);
            tasks.push(tokio::spawn(async move {
                if i == 3 {
                    return; // dropped without running: an early refusal
                }
                ticket.turn().await;
                ran.lock().unwrap().push(i);
                tokio::time::sleep(Duration::from_millis(2)).await;
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(*ran.lock().unwrap(), vec![0, 1, 2, 4, 5, 6, 7]);
    }
}
