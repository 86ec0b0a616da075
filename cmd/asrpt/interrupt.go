package main

import (
	"context"
	"fmt"
)

// untilDone runs work in its own goroutine and returns its result, or, as
// soon as ctx is done (SIGINT or SIGTERM: main's signal context), ctx's
// error wrapped with what, abandoning the work. It is for the long
// computations of conf, train and eval that do not look at a context: the
// process exits on return, so an abandoned computation ends with it, and
// since the command's outputs are written only after untilDone returns,
// an interrupted command writes none.
func untilDone[T any](ctx context.Context, what string, work func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	ch := make(chan result, 1)
	go func() {
		v, err := work()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("%s: %w", what, ctx.Err())
	}
}
