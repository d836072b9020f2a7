package testenv

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// MintToken asks for a ten-minute token of ServiceAccount ns/sa for
// audiences (none: the API server's), bound to pod unless pod is nil, as
// `kubectl create token SA --audience A --bound-object-kind Pod
// --bound-object-name POD --bound-object-uid UID` does, and as the kubelet
// projects one into a pod.
func MintToken(cs kubernetes.Interface, ns, sa string, pod *corev1.Pod, audiences ...string) (string, error) {
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: audiences, ExpirationSeconds: ptr.To[int64](600)}}
	if pod != nil {
		req.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), sa, req, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return tr.Status.Token, nil
}

// Token is MintToken that fails t when the API server refuses.
func Token(t testing.TB, cs kubernetes.Interface, ns, sa string, pod *corev1.Pod, audiences ...string) string {
	t.Helper()
	token, err := MintToken(cs, ns, sa, pod, audiences...)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// AgentPods creates each namespace with the ServiceAccount agent and, for
// each entry of pods (name → labels), a pod of that ServiceAccount that does
// not mount its token; it returns the pods by "namespace/name".
func AgentPods(t testing.TB, cs kubernetes.Interface, namespaces []string, pods map[string]map[string]string) map[string]*corev1.Pod {
	t.Helper()
	ctx := context.Background()
	out := map[string]*corev1.Pod{}
	for _, ns := range namespaces {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "agent"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for name, labels := range pods {
			p, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
				Spec: corev1.PodSpec{ServiceAccountName: "agent", AutomountServiceAccountToken: ptr.To(false),
					Containers: []corev1.Container{{Name: "agent", Image: "agent:dev"}}},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			out[ns+"/"+name] = p
		}
	}
	return out
}
