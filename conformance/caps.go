package conformance

import (
	"github.com/zksim/zksim"
)

// The need* helpers skip the case, with the exact reason, when the backend
// lacks what it needs.

func (e *env) needExpire() {
	e.t.Helper()
	if e.b.Expire == nil {
		e.t.Skipf("backend %s has no Expire control (Backend.Expire is nil)", e.b.Name)
	}
}

func (e *env) needDisconnect() {
	e.t.Helper()
	if e.b.Disconnect == nil {
		e.t.Skipf("backend %s has no Disconnect/Reconnect controls (Backend.Disconnect is nil)", e.b.Name)
	}
}

func (e *env) needExtendedTypes() {
	e.t.Helper()
	if !e.facts().ExtendedTypes {
		e.t.Skipf("backend %s has TTL nodes disabled (Facts.ExtendedTypes is false); the case needs zookeeper.extendedTypesEnabled=true", e.b.Name)
	}
}

func (e *env) needNoExtendedTypes() {
	e.t.Helper()
	if e.facts().ExtendedTypes {
		e.t.Skipf("backend %s has TTL nodes enabled (Facts.ExtendedTypes is true); the case checks a server with zookeeper.extendedTypesEnabled=false", e.b.Name)
	}
}

func (e *env) needReaping() {
	e.t.Helper()
	if interval := e.facts().ContainerCheckInterval; !reapsInTime(interval) {
		e.t.Skipf("backend %s reaps containers and TTL nodes every %v (Facts.ContainerCheckInterval), too seldom for the case to end within %v", e.b.Name, interval, caseTimeout)
	}
}

func (e *env) needSequenceHook() {
	e.t.Helper()
	if e.b.SetNextSequence == nil {
		e.t.Skipf("backend %s has no SetNextSequence hook; without it the int32 wrap of sequence numbers takes 2^31 creates", e.b.Name)
	}
}

// persistentWatcher returns c as a zksim.PersistentWatcher, or skips.
func (e *env) persistentWatcher(c zksim.Conn) zksim.PersistentWatcher {
	e.t.Helper()
	pw, ok := c.(zksim.PersistentWatcher)
	if !ok {
		e.t.Skipf("backend %s: its Conn (%T) does not implement zksim.PersistentWatcher (addWatch, removeWatches)", e.b.Name, c)
	}
	return pw
}

// ephemeralsLister returns c as a zksim.EphemeralsLister, or skips.
func (e *env) ephemeralsLister(c zksim.Conn) zksim.EphemeralsLister {
	e.t.Helper()
	el, ok := c.(zksim.EphemeralsLister)
	if !ok {
		e.t.Skipf("backend %s: its Conn (%T) does not implement zksim.EphemeralsLister (getEphemerals)", e.b.Name, c)
	}
	return el
}

// childCounter returns c as a zksim.ChildCounter, or skips.
func (e *env) childCounter(c zksim.Conn) zksim.ChildCounter {
	e.t.Helper()
	cc, ok := c.(zksim.ChildCounter)
	if !ok {
		e.t.Skipf("backend %s: its Conn (%T) does not implement zksim.ChildCounter (getAllChildrenNumber)", e.b.Name, c)
	}
	return cc
}
