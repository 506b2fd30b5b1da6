package worker

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/blobs"
)

// partsSweeper removes the parts of results whose histories the namespace no longer keeps
// (blobs.RunSweeper), from Start to Stop. The zero value (no store) does nothing.
type partsSweeper struct {
	store     blobs.Store
	retention time.Duration // 0: the namespace's
	client    client.Client
	namespace string
	logger    *zap.Logger

	mu   sync.Mutex
	stop context.CancelFunc
	done chan struct{}
}

// start runs the sweeps in the background: the first at once, then hourly.
func (s *partsSweeper) start() {
	if s == nil || s.store == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop, s.done = cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		retention := s.retention
		if retention <= 0 {
			var err error
			if retention, err = namespaceRetention(ctx, s.client, s.namespace); err != nil {
				s.logger.Warn("cannot read the namespace's retention: result parts will not be swept by this worker (set Options.PartsRetention)", zap.Error(err))
				return
			}
		}
		s.logger.Info("sweeping result parts older than the retention plus a day", zap.Duration("retention", retention))
		blobs.RunSweeper(ctx, s.store, blobs.SweepOptions{Retention: retention, OnSweep: func(n int, err error) {
			if err != nil {
				s.logger.Warn("sweeping result parts failed; the next sweep tries again", zap.Error(err))
			} else if n > 0 {
				s.logger.Info("swept result parts past retention", zap.Int("removed", n))
			}
		}})
	}()
}

// halt stops the sweeps and waits for the one under way.
func (s *partsSweeper) halt() {
	if s == nil {
		return
	}
	s.mu.Lock()
	stop, done := s.stop, s.done
	s.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// namespaceRetention is how long the namespace keeps closed workflows.
func namespaceRetention(ctx context.Context, c client.Client, namespace string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, detectTimeout)
	defer cancel()
	resp, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
	if err != nil {
		return 0, fmt.Errorf("describe namespace %q: %w", namespace, err)
	}
	d := resp.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration()
	if d <= 0 {
		return 0, fmt.Errorf("namespace %q reports no retention", namespace)
	}
	return d, nil
}
