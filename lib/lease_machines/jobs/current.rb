# frozen_string_literal: true

# LeaseMachines.current_lease: the running job's lease.
module LeaseMachines
  module Jobs
    # The lease of the job running on this fiber (Thread#[]), restored when a
    # job ends, so a job run inline from another gives the outer its lease back.
    module Current
      KEY = :lease_machines_current_lease

      def self.lease = Thread.current[KEY]

      def self.with(held)
        previous = Thread.current[KEY]
        Thread.current[KEY] = held
        yield
      ensure
        Thread.current[KEY] = previous
      end
    end
  end

  def self.current_lease = Jobs::Current.lease
end
