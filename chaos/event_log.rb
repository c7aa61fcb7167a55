# frozen_string_literal: true

require "json"

module Chaos
  # One process's events, one JSON object a line, each stamped with
  # CLOCK_REALTIME in nanoseconds (`t`): comparable across the processes of
  # the run, and with the databases' clocks. Written unbuffered, so a process
  # killed with SIGKILL loses no line it finished. Thread-safe.
  class EventLog
    def self.now_ns
      Process.clock_gettime(Process::CLOCK_REALTIME, :nanosecond)
    end

    # @return [Array<Hash>] every whole line of `path` (a line cut by a kill is skipped)
    def self.read(path)
      File.foreach(path).filter_map do |line|
        JSON.parse(line)
      rescue JSON::ParserError
        nil
      end
    end

    def initialize(path, **fields)
      @file = File.open(path, "a")
      @file.sync = true
      @fields = fields
      @mutex = Mutex.new
    end

    def log(event, **fields)
      line = JSON.generate({ t: self.class.now_ns, event: event }.merge(@fields).merge(fields))
      @mutex.synchronize { @file.write(line, "\n") }
    rescue IOError
      nil
    end

    def close
      @mutex.synchronize { @file.close }
    end
  end
end
