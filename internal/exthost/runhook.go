package exthost

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// runHook evaluates one hook within its timeout and turns every way it can go
// wrong into a Diagnostic. Built-in handlers (CEL, webhook) bound themselves
// and run inline; any other handler runs in its own goroutine so that a hook
// which ignores ctx or hangs only stops the host from waiting (rule R-HK-7):
// the goroutine is left to finish on its own copy of the input.
func runHook(ctx context.Context, b boundHook, in Input) (Verdict, *Diagnostic) {
	if p := b.hook.Params; p != nil {
		if skip, d := missingParams(b, p); skip || d != nil {
			return Verdict{Allowed: true}, d
		}
		in.Params = p.Values
	}
	if t := traceFrom(ctx); t != nil {
		return t.run(ctx, b, in)
	}
	timeout := b.timeout()
	var v Verdict
	var err error
	if bh, ok := b.hook.Handler.(builtinHandler); ok {
		v, err = safeCall(func() (Verdict, error) { return bh.evaluateWithin(ctx, timeout, in) })
	} else {
		v, err = evaluateDetached(ctx, timeout, b.hook.Handler, in)
	}
	if err == nil {
		return v, nil
	}
	d := &Diagnostic{ExtensionID: b.extension, Hook: b.hook.Name, Kind: DiagnosticError, Message: err.Error()}
	if errors.Is(err, context.DeadlineExceeded) {
		d.Kind = DiagnosticTimeout
		d.Message = fmt.Sprintf("no answer within %s: %v", timeout, err)
	}
	return Verdict{}, d
}

type evaluation struct {
	v   Verdict
	err error
}

func evaluateDetached(ctx context.Context, timeout time.Duration, h Handler, in Input) (Verdict, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan evaluation, 1) // buffered: a late hook never blocks on send
	go func() {
		v, err := safeCall(func() (Verdict, error) { return h.Evaluate(ctx, in) })
		done <- evaluation{v, err}
	}()
	select {
	case e := <-done:
		return e.v, e.err
	case <-ctx.Done():
		return Verdict{}, ctx.Err()
	}
}

// safeCall turns a hook's panic into an error: fail closed, never crash.
func safeCall(f func() (Verdict, error)) (v Verdict, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = Verdict{}, fmt.Errorf("hook panicked: %v", r)
		}
	}()
	return f()
}
