package jsonlimit

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A grant grows within the budget; past it the growth waits and, when the
// budget stays full, fails busy; a grant holding the whole budget decodes
// its answers inside it; release returns everything.
func TestGrant_GrowsWithinTheBudget(t *testing.T) {
	b := NewBudget(100, time.Millisecond)
	g1, err := b.Acquire(context.Background(), 60)
	if err != nil {
		t.Fatal(err)
	}
	g2, err := b.Acquire(context.Background(), 30)
	if err != nil {
		t.Fatal(err)
	}
	if err := g2.Grow(context.Background(), 10); err != nil || g2.Held() != 40 {
		t.Fatalf("grow within the budget: %v, held %d", err, g2.Held())
	}
	if err := g2.Grow(context.Background(), 1); !errors.Is(err, ErrBusy) || g2.Held() != 40 {
		t.Fatalf("grow past a full budget: %v, held %d; want ErrBusy", err, g2.Held())
	}
	g1.Release()
	g2.Release()
	all, err := b.Acquire(context.Background(), 1_000)
	if err != nil || all.Held() != 100 {
		t.Fatalf("acquire over the budget: %v, held %d; want the whole budget", err, all.Held())
	}
	if err := all.Grow(context.Background(), 50); err != nil || all.Held() != 100 {
		t.Fatalf("grow of a grant holding everything: %v, held %d", err, all.Held())
	}
	all.Release()
	if _, err := b.Acquire(context.Background(), 100); err != nil {
		t.Fatalf("release did not return the budget: %v", err)
	}
}

// Admit refuses a text over the value limit before any budget is drawn,
// and draws its cost from the grant in ctx.
func TestAdmit(t *testing.T) {
	b := NewBudget(1<<20, time.Millisecond)
	g, _ := b.Acquire(context.Background(), 0)
	ctx := WithGrant(context.Background(), g)
	var le *LimitError
	if _, err := Admit(ctx, []byte(`[{},{},{}]`), 3); !errors.As(err, &le) || le.Values != 4 || le.MaxValues != 3 || g.Held() != 0 {
		t.Fatalf("over the limit: %v, held %d", err, g.Held())
	}
	if _, err := Admit(ctx, []byte(`[{},{},{}]`), 4); err != nil || g.Held() != Cost(10, 4) {
		t.Fatalf("within the limit: %v, held %d, want %d", err, g.Held(), Cost(10, 4))
	}
	if n := CountValues([]byte(`{"a":[1,true,null,"x\"y"]}`)); n != 7 {
		t.Fatalf("CountValues = %d, want 7", n)
	}
}
