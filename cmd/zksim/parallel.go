package main

import (
	"bytes"
	"io"
	"strconv"
	"sync"
	"testing"
)

// inParallel runs job for 0, ..., n-1 on workers goroutines, each job in a
// subtest of t of its own, and calls done(i) for each i in turn, from the
// calling goroutine, once jobs 0 to i have ended: what done prints comes
// in the same order whatever the number of workers. With verbose, each
// job writes its logs to echo, which reaches out before done(i) is called
// (as they come with one worker, else held until then). It returns once
// every job ended.
func inParallel(t *testing.T, workers, n int, verbose bool, out io.Writer, job func(t *testing.T, i int, echo io.Writer), done func(i int)) {
	ended := make([]chan struct{}, n)
	echoes := make([]*lockedBuffer, n)
	for i := range n {
		ended[i] = make(chan struct{})
		if verbose && workers > 1 {
			echoes[i] = &lockedBuffer{}
		}
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				var echo io.Writer
				switch {
				case echoes[i] != nil:
					echo = echoes[i]
				case verbose:
					echo = out
				}
				t.Run(strconv.Itoa(i), func(t *testing.T) { job(t, i, echo) })
				close(ended[i])
			}
		})
	}
	go func() {
		for i := range n {
			next <- i
		}
		close(next)
	}()
	for i := range n {
		<-ended[i]
		if echoes[i] != nil {
			_, _ = out.Write(echoes[i].bytes())
		}
		done(i)
	}
	wg.Wait()
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}
