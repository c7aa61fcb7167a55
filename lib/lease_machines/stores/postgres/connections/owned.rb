# frozen_string_literal: true

module LeaseMachines
  module Stores
    class Postgres < Store
      module Connections
        # A connection this store opens from a URL, and opens again in a
        # forked child (see {ProcessLocal}); a Mutex serializes its use.
        #
        # A child never sends anything on the connection it inherited: before
        # its first use (or close) of the store, the inherited socket's file
        # descriptor is pointed at /dev/null (dup2), so the Terminate that
        # finalizing the PG::Connection sends when the child exits goes
        # nowhere, and the parent's session lives on. The parent's socket
        # itself is untouched (the child only replaces its own descriptor).
        class Owned
          # Points a connection's socket descriptor (in this process only) at
          # /dev/null.
          def self.silence(session)
            conn = session.connection
            return if conn.finished?

            conn.socket_io.reopen(File::NULL)
          rescue PG::Error, SystemCallError, IOError
            nil # no socket left to silence
          end

          def initialize(url)
            @mutex = Mutex.new
            @session = ProcessLocal.new(inherited: Owned.method(:silence)) { Session.new(PG.connect(url)) }
          end

          def with
            @mutex.synchronize { yield @session.current.ready }
          end

          def close
            @mutex.synchronize do
              @session.close do |session|
                session.connection.finish unless session.connection.finished?
              end
            end
          end
        end
      end
    end
  end
end
