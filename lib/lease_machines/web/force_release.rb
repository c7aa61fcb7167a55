# frozen_string_literal: true

module LeaseMachines
  class Web
    # A force release made from the UI ({Stores::Store#force_release}).
    module ForceRelease
      module_function

      def run(store, name, by:)
        started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        before = store.force_release(name)
        return nil unless before

        lease = before.lease
        Logging.warning("lease_machines: #{Logging.subject(name, nil)} force-released from the web UI by " \
                        "#{by.inspect}: #{what(before)}")
        Events.emit(:force_released, { resource: name, owner: lease&.owner, token: lease&.token,
                                       status: lease ? :released : :free, reason: :forced, by: by,
                                       duration: Process.clock_gettime(Process::CLOCK_MONOTONIC) - started })
        before
      end

      def what(before)
        lease = before.lease
        return "it had no lease (last issued #{before.last_issued || '-'})" unless lease

        "cleared the lease of owner #{lease.owner} (token #{lease.token}); last issued stays " \
          "#{before.last_issued}, so the next grant gets a greater token and the old holder is fenced"
      end
    end
  end
end
