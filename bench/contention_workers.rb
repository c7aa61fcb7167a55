# frozen_string_literal: true

# The processes of bench/contention_bench.rb: each forked worker contends
# for its resource for one round and reports what it saw. Times are
# CLOCK_MONOTONIC, which on Linux is one clock for every process, so a
# release in one process and the next grant in another can be subtracted.
module ContentionWorkers
  # What one worker saw in one round.
  Report = Struct.new(:grants, :refusals, :try_ns, :granted_try_ns, :events, :writes, keyword_init: true)

  HOLD = 0.001 # seconds a worker holds a granted lease before releasing it, unless a row says otherwise
  TTL = 30 # seconds: long enough that no lease expires within a round

  module_function

  def now_ns = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)

  # Forks `count` workers, each built by `make` (index => #try/#release/
  # #wait/#writes/#close), starts them together and returns their reports.
  # `hold`: the seconds a granted worker holds the lease.
  def round(count, seconds, mode, make, hold:)
    pipes = Array.new(count) { IO.pipe }
    starts = Array.new(count) { IO.pipe }
    pids = Array.new(count) do |index|
      fork do
        pipes.zip(starts).each_with_index do |((reader, writer), (start_reader, start_writer)), i|
          reader.close
          start_writer.close
          next if i == index

          writer.close
          start_reader.close
        end
        worker = make.call(index)
        pipes[index][1].write("r")
        pipes[index][1].flush
        deadline = Marshal.load(starts[index][0].read) # rubocop:disable Security/MarshalLoad
        report = work(worker, index, deadline, mode, hold)
        report.writes = worker.writes
        worker.close
        pipes[index][1].write(Marshal.dump(report))
        pipes[index][1].close
        exit!(0)
      rescue Exception => e # rubocop:disable Lint/RescueException -- a worker reports and never runs at_exit
        warn "worker #{index}: #{e.class}: #{e.message}\n  #{e.backtrace&.first(6)&.join("\n  ")}"
        exit!(1)
      end
    end
    pipes.each do |(reader, writer)|
      writer.close
      reader.read(1)
    end
    deadline = now_ns + (seconds * 1e9).to_i + 20_000_000
    starts.each do |(reader, writer)|
      reader.close
      writer.write(Marshal.dump(deadline))
      writer.close
    end
    reports = pipes.map { |(reader, _)| Marshal.load(reader.read) } # rubocop:disable Security/MarshalLoad
    pids.each { |pid| Process.wait(pid) }
    reports
  end

  # Hammer: a refused worker tries again at once. Wait: a refused worker
  # waits for the release (worker.wait) before trying again.
  def work(worker, index, deadline, mode, hold)
    report = Report.new(grants: 0, refusals: 0, try_ns: [], granted_try_ns: [], events: [])
    until now_ns >= deadline
      started = now_ns
      token = worker.try
      took = now_ns - started
      report.try_ns << took
      unless token
        report.refusals += 1
        worker.wait([(deadline - now_ns) / 1e9, 0].max) if mode == :wait
        next
      end
      report.grants += 1
      report.granted_try_ns << took
      report.events << [:granted, token, now_ns, index]
      sleep hold
      worker.release(token)
      report.events << [:released, token, now_ns, index]
      sleep hold * (1 + rand) if mode == :wait # let a woken waiter try first
    end
    report
  end

  # A durable store's worker: acquire/release on one resource. `listen`:
  # whether the worker waits for releases (the :wait rows), and so listens
  # from before the round. A worker that never waits does not listen, as an
  # application's hammering worker would not: on PostgreSQL every release
  # wakes each listening backend.
  class StoreWorker
    def initialize(store, name, owner, writes, listen:)
      @store = store
      @authority = store.authority(name)
      @owner = owner
      @writes = writes
      @authority.checkpoint # connect (and prepare) before the round
      @store.await_handover(name, 0) if listen
    end

    def try
      decision = @authority.acquire(owner: @owner, ttl: TTL)
      decision.lease.token if decision.granted?
    end

    def release(token) = @authority.release(owner: @owner, token: token)
    def wait(seconds) = @authority.await_handover([seconds, TTL].min)
    def writes = @writes&.call
    def close = @store.close
  end

  # The baseline: a bare PostgreSQL advisory lock, tried with
  # pg_try_advisory_lock and given back with pg_advisory_unlock.
  class AdvisoryWorker
    def initialize(conn, key)
      @conn = conn
      @key = key
      @conn.prepare("try", "SELECT pg_try_advisory_lock($1)")
      @conn.prepare("unlock", "SELECT pg_advisory_unlock($1)")
      @tokens = 0
    end

    def try
      return nil unless @conn.exec_prepared("try", [@key]).getvalue(0, 0) == "t"

      @tokens += 1
    end

    def release(_token) = @conn.exec_prepared("unlock", [@key])
    def wait(_seconds) = nil
    def writes = nil
    def close = @conn.close
  end
end
