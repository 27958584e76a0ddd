package mgmt

import (
	"context"
	"sync"
)

// parallel runs fns concurrently and returns the first error; the
// others' context is cancelled when one fails.
func parallel(ctx context.Context, fns ...func(context.Context) error) error {
	return forEach(ctx, len(fns), len(fns), func(ctx context.Context, i int) error { return fns[i](ctx) })
}

// forEach runs fn for 0..n-1 with at most limit running at once and
// returns the first error.
func forEach(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	if n == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		sem   = make(chan struct{}, max(1, limit))
	)
	for i := 0; i < n; i++ {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}(i)
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		// Cancelled from outside, not by a failure of ours.
		return ctx.Err()
	}
	return first
}
