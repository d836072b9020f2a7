package resources

import (
	"errors"
	"fmt"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// ReasonedError is an error that maps to a Workspace condition reason, so the
// controller can report it without parsing messages.
type ReasonedError interface {
	error
	Reason() vocab.ConditionReason
}

// ReasonOf returns the condition reason of err, or ReasonInvalidResource for
// errors of this package that carry none (I/O errors are reported as invalid
// input because the controller never feeds this package anything but values).
func ReasonOf(err error) vocab.ConditionReason {
	var r ReasonedError
	if errors.As(err, &r) {
		return r.Reason()
	}
	return vocab.ReasonInvalidResource
}

// DuplicateNameError: two resources of one kind share a logical name inside one
// root, which order cannot decide (rule R-CAT-2).
type DuplicateNameError struct {
	Kind, Name, Root string
	First, Second    Origin
}

func (e *DuplicateNameError) Error() string {
	return fmt.Sprintf("root %q defines %s:%s twice: %s and %s", e.Root, e.Kind, e.Name, e.First, e.Second)
}

// Reason implements ReasonedError.
func (e *DuplicateNameError) Reason() vocab.ConditionReason { return vocab.ReasonDuplicateName }

// InvalidResourceError: a resource failed validation. Origin and Field name
// what to fix (for directory roots Origin names the file).
type InvalidResourceError struct {
	Kind    string
	Origin  Origin
	Field   string
	Message string
}

func (e *InvalidResourceError) Error() string {
	return fmt.Sprintf("%s %s: %s: %s", e.Kind, e.Origin, e.Field, e.Message)
}

// Reason implements ReasonedError.
func (e *InvalidResourceError) Reason() vocab.ConditionReason {
	return vocab.ReasonInvalidResource
}

// ActivationError: a skill or one of its files could not be activated, or an
// activation was refused (rule R-ACT-1, R-ACT-2, R-ACT-4, R-CTX-3).
type ActivationError struct {
	Skill string
	// File is the request as written, empty when the skill itself failed.
	File    string
	Message string
	Err     error
}

func (e *ActivationError) Error() string {
	msg := e.Message
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.File != "" {
		return fmt.Sprintf("activate skill %q file %q: %s", e.Skill, e.File, msg)
	}
	return fmt.Sprintf("activate skill %q: %s", e.Skill, msg)
}

func (e *ActivationError) Unwrap() error { return e.Err }

// Reason implements ReasonedError.
func (e *ActivationError) Reason() vocab.ConditionReason { return vocab.ReasonActivationFailed }

// TooLargeError: the published data exceeds the budget; nothing is published.
type TooLargeError struct {
	Bytes, Max int64
	// AtLeast: building stopped at the first byte over the budget, so Bytes
	// is a lower bound, not the size the whole context would have had.
	AtLeast bool
}

func (e *TooLargeError) Error() string {
	if e.AtLeast {
		return fmt.Sprintf("context is at least %d bytes, over the budget of %d bytes (spec.budget.maxContextBytes); building stopped there", e.Bytes, e.Max)
	}
	return fmt.Sprintf("context is %d bytes, over the budget of %d bytes (spec.budget.maxContextBytes)", e.Bytes, e.Max)
}

// Reason implements ReasonedError.
func (e *TooLargeError) Reason() vocab.ConditionReason { return vocab.ReasonContextTooLarge }

// TemplateError: a template could not be rendered (unknown template, or a
// missing argument named by Variable; rule R-TPL-2). It is never a Workspace
// condition, only an answer to render calls, so its reason is the generic
// ReasonInvalid.
type TemplateError struct {
	Template string
	Variable string
	Message  string
}

func (e *TemplateError) Error() string {
	if e.Variable != "" {
		return fmt.Sprintf("render template %q: variable %q: %s", e.Template, e.Variable, e.Message)
	}
	return fmt.Sprintf("render template %q: %s", e.Template, e.Message)
}

// Reason implements ReasonedError.
func (e *TemplateError) Reason() vocab.ConditionReason { return vocab.ReasonInvalid }
