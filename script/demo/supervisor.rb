# frozen_string_literal: true

module LeaseMachinesDemo
  # The real story, with real processes: the supervisor forks worker 7,
  # stops it with SIGSTOP between its lease check and its write, waits past
  # its lease, forks worker 12 (which takes the lease with a greater token and
  # writes), then resumes worker 7 and lets its late write happen. Told twice:
  # through the fence, where the late write is refused, and without it, where
  # it overwrites worker 12's report.
  class Supervisor
    # What one round ends with: the report as stored and how worker 7's write went.
    Round = Struct.new(:fenced, :report, :seven_status, keyword_init: true) do
      def stale_write_went_through? = report.nil? || report[1] != 12
    end

    def initialize(backend, out)
      @backend = backend
      @out = out
      @timeline = Timeline.new(out)
      @workers = []
    end

    # @param rounds [Array<Symbol>] :fenced and/or :unfenced, in order
    # @return [Array<Round>]
    def run(rounds)
      @out.puts "lease_machines #{LeaseMachines::VERSION}: one report, two worker processes, a #{Worker::TTL} s lease " \
                "(#{@backend.describe})."
      @backend.prepare
      rounds.map { |kind| round(kind == :fenced) }.tap { |results| outcome(results) }
    end

    private

    def say(text) = @timeline.say("supervisor", text)

    def round(fenced)
      resource = fenced ? "nightly-report" : "nightly-report-unfenced"
      @timeline.heading(fenced ? "Round 1: every write goes through the fence" : "Round 2: the same story without the fence")
      channel, seven = start_worker_seven(resource, fenced)
      stop_seven_past_its_lease(channel, seven)
      say("forks worker 12")
      twelve = fork_worker(12, resource, fenced, &:successor)
      wait(twelve)
      # Said before the signal, so worker 7's own lines always come after it.
      say("SIGCONT worker 7: it wakes up and carries on where it stopped")
      Process.kill(:CONT, seven)
      status = wait(seven)
      Round.new(fenced: fenced, report: @backend.report(resource), seven_status: status).tap { |result| show(result) }
    ensure
      channel&.close
      stop_workers
    end

    # Ends the workers that are still running (after a failure) and reaps them.
    def stop_workers
      @workers.each do |pid|
        Process.kill(:KILL, pid)
        Process.waitpid(pid)
      rescue Errno::ESRCH, Errno::ECHILD
        nil
      end
      @workers.clear
    end

    def start_worker_seven(resource, fenced)
      reader, writer = IO.pipe
      say("forks worker 7")
      seven = fork_worker(7, resource, fenced) do |worker|
        reader.close
        worker.first(writer)
      end
      writer.close
      [reader, seven]
    end

    def stop_seven_past_its_lease(channel, seven)
      raise "worker 7 said nothing within 10 s" unless channel.wait_readable(10)

      expires_at_ns = Integer(channel.gets, 10)
      Process.kill(:STOP, seven)
      say("SIGSTOP worker 7, between its check and its write (a long GC pause, a frozen VM)")
      sleep [(expires_at_ns / 1e9) - Time.now.to_f + 0.1, 0].max
      say("worker 7's lease has run out; nothing can tell worker 7, it is not running")
    end

    def fork_worker(owner, resource, fenced)
      pid = fork do
        status = 1
        begin
          status = yield Worker.new(owner, @backend, @timeline, resource, fenced: fenced)
        rescue Exception => e # rubocop:disable Lint/RescueException -- report anything from the worker
          warn "worker #{owner}: #{e.class}: #{e.message}"
        ensure
          @out.flush
          Process.exit!(status)
        end
      end
      @workers << pid
      pid
    end

    def wait(pid, timeout: 10)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
      loop do
        _, status = Process.waitpid2(pid, Process::WNOHANG)
        if status
          @workers.delete(pid)
          return status.exitstatus
        end
        raise "worker #{pid} did not finish within #{timeout} s" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

        sleep 0.01
      end
    end

    def show(result)
      body, writer, token = result.report
      say("the report is #{body.inspect}, written by worker #{writer} with token #{token}")
    end

    def outcome(results)
      @out.puts
      results.each { |result| @out.puts(verdict(result)) }
    end

    def verdict(result)
      stale = result.stale_write_went_through?
      if result.fenced
        return "FAILED: the fence let worker 7's stale write through." if stale

        "With the fence: worker 12's report stands; worker 7's late write (token 1) was refused because the fence " \
          "had already accepted token 2."
      elsif stale
        "Without the fence: worker 7's late write replaced worker 12's report, though its lease had run out."
      else
        "Without the fence: worker 12's report survived this time (timing luck, not safety)."
      end
    end
  end
end
