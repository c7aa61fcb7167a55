# frozen_string_literal: true

module LeaseMachines
  module Stores
    class SQLite < Store
      # Whether any process on the host is waiting for a release in this
      # database, told through a lock file beside it (`<database>-waiters`,
      # empty): a process holds a shared `flock` on it while one of its
      # threads waits in {Store#await_handover}, and a grant that would take
      # its turn ({SQLite#take_turn}) first asks for an exclusive one without
      # waiting. So a process taking and giving back a lease that nobody else
      # wants never pauses. When the file cannot be opened (a read-only
      # directory), everyone counts as waiting: the pause is taken as before.
      class Waiters
        # One process's two open descriptions of the file (a flock belongs to
        # the description): `shared` for its waiting threads, counted, and
        # `probe` for the question.
        Files = Struct.new(:shared, :probe, :waiting)
        private_constant :Files

        # @param path [String] the database file
        def initialize(path)
          @path = "#{path}-waiters"
          @mutex = Mutex.new
          @files = ProcessLocal.new { open_files }
        end

        # Runs the block with this process counted as waiting.
        # @return the block's value
        def waiting
          files = enter
          yield
        ensure
          leave(files) if files
        end

        # @return [Boolean] whether a thread of any process (this one's
        #   included) is waiting, or the file cannot tell
        def any?
          @mutex.synchronize do
            probe = @files.current&.probe
            next true unless probe
            next true unless probe.flock(File::LOCK_EX | File::LOCK_NB)

            probe.flock(File::LOCK_UN)
            false
          end
        end

        private

        # @return [Files, nil] this process's files, counted in; nil when
        #   the file cannot be opened
        def enter
          @mutex.synchronize do
            files = @files.current
            next unless files

            files.shared.flock(File::LOCK_SH) if files.waiting.zero?
            files.waiting += 1
            files
          end
        end

        # A child forked inside the block has files of its own: it leaves
        # its parent's count alone.
        def leave(files)
          @mutex.synchronize do
            next unless files.equal?(@files.current)

            files.waiting -= 1
            files.shared.flock(File::LOCK_UN) if files.waiting.zero?
          end
        end

        def open_files
          shared = open_file
          Files.new(shared, open_file, 0)
        rescue SystemCallError
          shared&.close
          nil
        end

        def open_file
          File.open(@path, File::RDWR | File::CREAT | File::BINARY, 0o644)
        end
      end
    end
  end
end
