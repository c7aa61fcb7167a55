# frozen_string_literal: true

require "zlib"

module LeaseMachines
  module Stores
    class SQLite < Store
      # Whether another process wants a resource right now, told through a
      # small file beside the database (`<database>-waiters`, 8 KiB, never
      # synced): a process that was refused a resource as occupied, or that
      # polls for its release ({Store#await_handover}), writes the time
      # (CLOCK_MONOTONIC, one clock for every process of the host) and its pid
      # into the resource's slot of the file, at most once a millisecond. A
      # process about to take back what it has just released
      # ({SQLite#take_turn}) reads the slot: only another process's stamp of
      # the last {RECENT} makes it pause. So a process taking and giving back
      # a lease nobody else wants never pauses. Names share the file's slots
      # by a hash: a collision costs a pause, never a decision. When the file
      # cannot be opened (a read-only directory), everyone counts as wanting
      # every resource: the pause is taken as before.
      class Waiters
        SLOTS = 512
        STAMP = 16 # bytes: microseconds and a pid, little-endian unsigned
        # How long a stamp counts, in microseconds: longer than a waiter's
        # poll (at most 8 ms) and a refused try's pause.
        RECENT = 20_000
        # A process stamps one slot at most this often (microseconds).
        RESTAMP = 1_000
        private_constant :SLOTS, :STAMP, :RESTAMP

        # @param path [String] the database file
        def initialize(path)
          @path = "#{path}-waiters"
          @file = ProcessLocal.new { open_file }
          @opening = Mutex.new
          @stamped = {} # slot => when this process last stamped it
        end

        # Records that this process wants `name` now.
        def want(name)
          file = current
          return unless file

          slot = slot(name)
          now = now_us
          return if now - @stamped.fetch(slot, -RESTAMP) < RESTAMP

          @stamped[slot] = now
          file.pwrite([now, Process.pid].pack("Q<Q<"), slot * STAMP)
        rescue SystemCallError
          nil # an unwritable file only loses this one stamp
        end

        # @return [Boolean] whether another process stamped `name` within
        #   {RECENT}, or the file cannot tell
        def wanted?(name)
          file = current
          return true unless file

          stamp, pid = file.pread(STAMP, slot(name) * STAMP).unpack("Q<Q<")
          pid != Process.pid && now_us - stamp < RECENT
        rescue SystemCallError, EOFError
          true
        end

        private

        def current
          @opening.synchronize { @file.current }
        end

        # CRC-32 of the name: the same in every process (String#hash is not).
        def slot(name)
          Zlib.crc32(name) % SLOTS
        end

        def now_us
          Process.clock_gettime(Process::CLOCK_MONOTONIC, :microsecond)
        end

        # Opened at its full size (zeros: nobody stamped), so every slot reads whole.
        def open_file
          file = File.open(@path, File::RDWR | File::CREAT | File::BINARY, 0o644)
          file.truncate(SLOTS * STAMP) if file.size < SLOTS * STAMP
          file
        rescue SystemCallError
          file&.close
          nil
        end
      end
    end
  end
end
