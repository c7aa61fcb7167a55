# frozen_string_literal: true

module LeaseMachines
  module Stores
    class Postgres < Store
      # Waits for releases: one LISTENing connection per store and process, never the store's (a wait
      # blocks it; a pooler in transaction mode cannot LISTEN), read by one thread at a time in slices.
      class Listener
        SLICE = 0.05
        PREFIX = "lease_machines_"
        private_constant :SLICE, :PREFIX

        def self.channel(name) = PREFIX + Digest::SHA256.hexdigest(name)[0, 40]

        def initialize(connect, failures)
          @failures = failures
          @io = Mutex.new # the connection and its set of channels
          @lock = Mutex.new # @seen and @reader
          @arrived = ConditionVariable.new
          @seen = Hash.new(0) # name => releases heard (this process)
          @reader = nil # the pid of the process one of whose threads reads the connection
          @starting = 0 # threads waiting to add their LISTEN (no turn is taken meanwhile)
          silence = ->((session, _channels)) { Connections.silence(session) }
          @session = ProcessLocal.new(inherited: silence) { [Session.new(connect.call), {}] }
        end

        # true once a release of one of `names` was heard (since this process last read counts), false at timeout
        def await(names, seconds)
          deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
          before = @lock.synchronize do
            @starting += 1
            @seen.values_at(*names)
          end
          begin
            @io.synchronize { start(names) }
          ensure
            @lock.synchronize do
              @starting -= 1
              @arrived.broadcast
            end
          end
          loop do
            slice = @lock.synchronize do
              return true if @seen.values_at(*names) != before

              left = deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)
              return false unless left.positive?

              next take_turn(left) unless @reader == Process.pid || @starting.positive?

              @arrived.wait(@lock, left)
              nil
            end
            read(slice) if slice
          end
        end

        def close = @io.synchronize { finish }

        private

        def start(names)
          session, channels = connection
          conn = session.connection
          names.each do |name|
            channel = Listener.channel(name)
            next if channels[channel]

            conn.exec("LISTEN #{conn.quote_ident(channel)}")
            channels[channel] = true
          end
          conn.consume_input
          collect(conn)
        rescue PG::Error => e
          drop
          raise @failures.unavailable(e)
        end

        # A child forked while a parent's thread was reading sees another pid here, and reads its own connection.
        def take_turn(left)
          @reader = Process.pid
          [left, SLICE].min
        end

        def read(slice)
          @io.synchronize do
            conn = connection.first.connection
            conn.wait_for_notify(slice) { |_channel, _pid, payload| heard(payload) }
            collect(conn)
          end
        rescue PG::Error => e
          @io.synchronize { drop }
          raise @failures.unavailable(e)
        ensure
          @lock.synchronize do
            @reader = nil
            @arrived.broadcast
          end
        end

        def collect(conn)
          while (notification = conn.notifies)
            heard(notification[:extra])
          end
        end

        def heard(payload) = @lock.synchronize { @seen[payload.dup.force_encoding(Encoding::UTF_8)] += 1 }

        def connection
          pair = @session.current
          raise PG::ConnectionBad, "the listening connection is closed" if pair.first.connection.finished?

          pair
        end

        def finish = @session.close { |(session, _)| Connections.close(session) }

        def drop
          finish
        rescue PG::Error
          nil
        end
      end
      private_constant :Listener
    end
  end
end
