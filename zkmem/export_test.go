package zkmem

// PlantAcceptAhead plants a bug in e, for tests that must catch it: its
// members accept a reconnecting client that has seen a zxid they have not
// applied, so that the client may read an older state than it saw.
func PlantAcceptAhead(e *Ensemble) {
	e.core.mu.Lock()
	defer e.core.mu.Unlock()
	e.acceptAhead = true
}

// PlantSyncEarly plants a bug in e, for tests that must catch it: its
// members answer a sync at once, before they applied what the leader had
// committed, so that a read after the sync may miss a write acknowledged
// before it.
func PlantSyncEarly(e *Ensemble) {
	e.core.mu.Lock()
	defer e.core.mu.Unlock()
	e.syncEarly = true
}

// BeforeSetWatches has f run whenever one of e's Conns has connected again
// and is about to send its setWatches (see Conn.sendSetWatches).
func BeforeSetWatches(e *Ensemble, f func()) {
	e.core.mu.Lock()
	defer e.core.mu.Unlock()
	e.beforeSetWatches = f
}
