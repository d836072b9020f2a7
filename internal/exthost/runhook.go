package exthost

import (
	"context"
	"errors"
	"fmt"
)

// runHook evaluates one hook within its timeout and turns every way it can go
// wrong into a Diagnostic. Built-in handlers (CEL, webhook) honour ctx and run
// inline; any other handler runs in its own goroutine so that a hook which
// ignores ctx or hangs only stops the host from waiting (SPEC R-HK-7): the
// goroutine is left to finish on its own copy of the input.
func runHook(ctx context.Context, b boundHook, in Input) (Verdict, *Diagnostic) {
	hctx, cancel := context.WithTimeout(ctx, b.timeout())
	defer cancel()

	var v Verdict
	var err error
	if _, ok := b.hook.Handler.(builtinHandler); ok {
		v, err = safeEvaluate(hctx, b.hook.Handler, in)
	} else {
		v, err = evaluateDetached(hctx, b.hook.Handler, in)
	}
	if err == nil {
		return v, nil
	}
	d := &Diagnostic{ExtensionID: b.extension, Hook: b.hook.Name, Kind: DiagnosticError, Message: err.Error()}
	if errors.Is(hctx.Err(), context.DeadlineExceeded) {
		d.Kind = DiagnosticTimeout
		d.Message = fmt.Sprintf("no answer within %s: %v", b.timeout(), err)
	}
	return Verdict{}, d
}

type evaluation struct {
	v   Verdict
	err error
}

func evaluateDetached(ctx context.Context, h Handler, in Input) (Verdict, error) {
	done := make(chan evaluation, 1) // buffered: a late hook never blocks on send
	go func() {
		v, err := safeEvaluate(ctx, h, in)
		done <- evaluation{v, err}
	}()
	select {
	case e := <-done:
		return e.v, e.err
	case <-ctx.Done():
		return Verdict{}, ctx.Err()
	}
}

func safeEvaluate(ctx context.Context, h Handler, in Input) (v Verdict, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = Verdict{}, fmt.Errorf("hook panicked: %v", r)
		}
	}()
	return h.Evaluate(ctx, in)
}
