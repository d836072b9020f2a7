package ledgerexport

import (
	"context"
	"sync"
	"time"
)

// Batching as the OpenTelemetry SDK's batch processors do it, with their
// settings (batchSettings: OTEL_BLRP_*, OTEL_BSP_*): a bounded queue that
// drops when full (a verdict never waits on telemetry), exported when a
// batch is full or the delay has passed, each export within its timeout,
// and flushed at shutdown. The default delays are the SDK's.
const (
	logsInterval   = time.Second
	tracesInterval = 5 * time.Second
)

// batcher queues items of one signal and sends them in batches with export
// from one goroutine.
type batcher[T any] struct {
	queue  chan T
	export func(ctx context.Context, batch []T) error
	set    batchSettings
	// stop asks the loop to flush and end; done is closed when it has.
	stop chan context.Context
	done chan struct{}
	once sync.Once
}

func newBatcher[T any](set batchSettings, export func(context.Context, []T) error) *batcher[T] {
	b := &batcher[T]{queue: make(chan T, set.queue), export: export, set: set, stop: make(chan context.Context), done: make(chan struct{})}
	go b.loop()
	return b
}

// add queues an item, or drops it when the queue is full or stopped.
func (b *batcher[T]) add(item T) {
	select {
	case <-b.done:
	case b.queue <- item:
	default:
	}
}

func (b *batcher[T]) loop() {
	defer close(b.done)
	tick := time.NewTicker(b.set.delay)
	defer tick.Stop()
	batch := make([]T, 0, b.set.batch)
	send := func(ctx context.Context) {
		if len(batch) > 0 {
			ctx, cancel := context.WithTimeout(ctx, b.set.timeout)
			// A collector's refusal drops the batch, as the SDK does.
			_ = b.export(ctx, batch)
			cancel()
			batch = batch[:0]
		}
	}
	for {
		select {
		case it := <-b.queue:
			if batch = append(batch, it); len(batch) == b.set.batch {
				send(context.Background())
			}
		case <-tick.C:
			send(context.Background())
		case ctx := <-b.stop:
			for {
				select {
				case it := <-b.queue:
					if batch = append(batch, it); len(batch) == b.set.batch {
						send(ctx)
					}
					continue
				default:
				}
				break
			}
			send(ctx)
			return
		}
	}
}

// shutdown flushes what is queued within ctx and stops; later items are
// dropped.
func (b *batcher[T]) shutdown(ctx context.Context) error {
	b.once.Do(func() {
		select {
		case b.stop <- ctx:
		case <-b.done:
		}
	})
	select {
	case <-b.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
