package sim

// Device is one device of the virtual cluster.
type Device struct {
	Name string
	// Lanes is the number of batches the device runs at once (at least 1).
	Lanes int
	// Memory is the device's capacity in the Service model's memory units.
	Memory float64
	// Speed scales the profiled device's times: 2 runs twice as fast.
	Speed float64
}

// lane is one execution stream of a device.
type lane struct {
	jobs      []*Job // the batch running; empty when idle
	batch     int64
	samples   int32
	start     float64
	remaining float64 // work left, in seconds at rate 1
	memory    float64
	predEnd   float64
}

type deviceState struct {
	Device
	lanes   []lane
	busy    int
	memUsed float64
	settled float64 // time up to which remaining work is accounted
	rate    float64 // progress rate of each busy lane
	// rates[k] is each busy lane's rate with k lanes busy, k = 0..Lanes:
	// Speed / max(1, Contention(d, k)), worked out once.
	rates   []float64
	queue   queue // waiting jobs in the policy's order (no GroupPicker)
	groups  map[kind]*group
	active  []*group // groups with jobs waiting
	waiting int      // jobs waiting
	queued  float64  // their predicted work, seconds at rate 1
	inbound int      // jobs in transit to the device
	inMem   float64  // their memory, reserved
	timer   float64  // when the pending batching timer fires; +Inf if none
}

// settle accounts the work done on device ds since it was last settled.
func (s *State) settle(ds *deviceState) {
	dt := s.now - ds.settled
	if dt > 0 && ds.busy > 0 {
		for i := range ds.lanes {
			if len(ds.lanes[i].jobs) > 0 {
				ds.lanes[i].remaining = max(0, ds.lanes[i].remaining-dt*ds.rate)
			}
		}
	}
	ds.settled = s.now
}

// retime sets device d's rate for its busy lanes after a batch started on
// lane started (or ended, started < 0). Only a change of rate moves the
// completions already scheduled; otherwise just the new batch's completion
// is scheduled. Call after settle.
func (s *State) retime(d, started int) {
	if s.cfg.Machine != nil {
		return // the batches end when they have run
	}
	ds := &s.devs[d]
	var rate float64
	if ds.busy < len(ds.rates) {
		rate = ds.rates[ds.busy]
	} else {
		rate = ds.Speed / max(1, s.cfg.Service.Contention(d, ds.busy))
	}
	if rate == ds.rate {
		if started >= 0 {
			s.schedule(d, started)
		}
		return
	}
	ds.rate = rate
	for i := range ds.lanes {
		if len(ds.lanes[i].jobs) > 0 {
			s.schedule(d, i)
		}
	}
}

// schedule (re)schedules the completion of lane i of device d at its rate.
func (s *State) schedule(d, i int) {
	ds := &s.devs[d]
	s.seq++
	s.events.set(s.slot[d]+1+int32(i), s.now+ds.lanes[i].remaining/ds.rate, s.seq)
}
