# frozen_string_literal: true

require "zlib"

module LeaseMachines
  module Stores
    class SQLite < Store
      # Whether another process wants a resource now, through `<database>-waiters` (8 KiB, never synced): a refused
      # or polling process stamps its slot (CLOCK_MONOTONIC, pid); slots shared by hash; no file: everyone wants all.
      class Waiters
        SLOTS = 512
        STAMP = 16 # bytes: microseconds and a pid, little-endian unsigned
        # How long a stamp counts (µs): longer than a waiter's poll (at most 8 ms) and a refused try's pause.
        RECENT = 20_000
        RESTAMP = 1_000
        private_constant :SLOTS, :STAMP, :RESTAMP

        def initialize(path)
          @path = "#{path}-waiters"
          @file = ProcessLocal.new { open_file }
          @opening = Mutex.new
          @stamped = {} # slot => when this process last stamped it
        end

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

        # Whether another process stamped `name` within {RECENT}, or the file cannot tell.
        def wanted?(name)
          file = current
          return true unless file

          stamp, pid = file.pread(STAMP, slot(name) * STAMP).unpack("Q<Q<")
          pid != Process.pid && now_us - stamp < RECENT
        rescue SystemCallError, EOFError
          true
        end

        private

        def current = @opening.synchronize { @file.current }

        # CRC-32: the same in every process (String#hash is not).
        def slot(name) = Zlib.crc32(name) % SLOTS
        def now_us = Process.clock_gettime(Process::CLOCK_MONOTONIC, :microsecond)

        # Opened at its full size (zeros), so every slot reads whole.
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
