# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      module Connections
        # A connection this store opens from a URL ({URL}), opens again after
        # it failed, and opens anew in a forked child (see {ProcessLocal}); a
        # Mutex serializes its use.
        #
        # A child never sends anything on the connection it inherited: the
        # inherited client's `automatic_close` is turned off, so finalizing it
        # when the child exits points its socket at /dev/null (mysql2 does
        # that) instead of sending COM_QUIT, and the parent's session lives on.
        class Owned
          def self.silence(session)
            session.connection.automatic_close = false
          rescue Mysql2::Error
            nil
          end

          def initialize(url)
            options = URL.options(url)
            @mutex = Mutex.new
            @session = ProcessLocal.new(inherited: Owned.method(:silence)) { Session.new(Mysql2::Client.new(**options)) }
          end

          def with
            @mutex.synchronize do
              session = @session.current
              if session.connection.closed?
                @session.close { nil } # it failed and was closed: open a new one
                session = @session.current
              end
              yield session.ready
            end
          end

          def close
            @mutex.synchronize do
              @session.close { |session| session.connection.close unless session.connection.closed? }
            end
          end
        end
      end
    end
  end
end
