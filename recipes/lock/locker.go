package lock

import (
	"context"
	"fmt"
	"sync"
)

// NewLocker returns m as a [sync.Locker], as etcd's concurrency.NewLocker
// does, for code written against that interface. Lock is m.Lock and
// Unlock is m.Unlock, with context.Background().
//
// What it promises: Lock returns only once m holds the lock, and Unlock
// returns only once m's lock node is deleted (or gone with its session).
// Both wait out connection losses for as long as it takes.
//
// What it cannot promise, for want of a context and an error:
//
//   - no timeout and no cancellation: Lock waits as long as other clients
//     hold the lock or queue ahead of it, like sync.Mutex.Lock;
//   - no error: Lock panics when it cannot take the lock (the session
//     expired, the Conn was closed, m already holds the lock or is taking
//     it, or the server refused, say for want of permission), and Unlock
//     panics when m holds nothing (as sync.Mutex.Unlock of an unlocked
//     mutex is an error) or the server refuses the delete. The panic value
//     is an error that wraps the cause, for errors.Is after recover;
//   - no news of the hold: a hold can become Doubtful or Lost while the
//     caller works under it (a connection loss, an expired session, a
//     process pause), and sync.Locker has no way to say so. Code that
//     must not act without the lock watches m.Done or m.State, fences its
//     writes with m.Token, or guards them with m.Guard; that code should
//     use m itself, with a context.
//
// The Locker shares m's state: m.Key, m.Token, m.Guard, m.State, m.Watch
// and m.Done describe the hold taken through it. Like m, it is not
// reentrant and not for concurrent Lock calls.
func NewLocker(m *Mutex) sync.Locker { return locker{m} }

type locker struct{ m *Mutex }

func (l locker) Lock() {
	if err := l.m.Lock(context.Background()); err != nil {
		panic(fmt.Errorf("lock: Locker.Lock: %w", err))
	}
}

func (l locker) Unlock() {
	if err := l.m.Unlock(context.Background()); err != nil {
		panic(fmt.Errorf("lock: Locker.Unlock: %w", err))
	}
}
