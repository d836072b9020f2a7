package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// GetConditions and SetConditions give generic code (condition helpers,
// kstatus-style readers) the conditions of every Loadout kind, as Cluster
// API's conditions.Getter and Setter do.

// GetConditions returns the Workspace's conditions.
func (w *Workspace) GetConditions() []metav1.Condition { return w.Status.Conditions }

// SetConditions replaces the Workspace's conditions.
func (w *Workspace) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }

// GetConditions returns the Skill's conditions.
func (s *Skill) GetConditions() []metav1.Condition { return s.Status.Conditions }

// SetConditions replaces the Skill's conditions.
func (s *Skill) SetConditions(c []metav1.Condition) { s.Status.Conditions = c }

// GetConditions returns the Template's conditions.
func (t *Template) GetConditions() []metav1.Condition { return t.Status.Conditions }

// SetConditions replaces the Template's conditions.
func (t *Template) SetConditions(c []metav1.Condition) { t.Status.Conditions = c }

// GetConditions returns the Extension's conditions.
func (e *Extension) GetConditions() []metav1.Condition { return e.Status.Conditions }

// SetConditions replaces the Extension's conditions.
func (e *Extension) SetConditions(c []metav1.Condition) { e.Status.Conditions = c }

// SetObservedGeneration records the generation the Skill's status describes.
func (s *Skill) SetObservedGeneration(g int64) { s.Status.ObservedGeneration = g }

// SetObservedGeneration records the generation the Template's status describes.
func (t *Template) SetObservedGeneration(g int64) { t.Status.ObservedGeneration = g }

// SetObservedGeneration records the generation the Extension's status describes.
func (e *Extension) SetObservedGeneration(g int64) { e.Status.ObservedGeneration = g }
