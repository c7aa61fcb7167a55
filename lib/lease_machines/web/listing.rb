# frozen_string_literal: true

module LeaseMachines
  class Web
    # The index's list: the store's resources filtered by a name or a glob
    # ({NamePattern}), then one page of them. A filter without glob
    # characters keeps the names that contain it.
    class Listing
      # @return [String] the filter as given ("" for none)
      attr_reader :filter
      # @return [Integer] the page shown, from 1
      attr_reader :page
      # @return [Integer]
      attr_reader :pages
      # @return [Integer] resources in the store
      attr_reader :total
      # @return [Array<Stores::Status>] the filtered resources of the page shown
      attr_reader :statuses
      # @return [Integer] resources the filter kept
      attr_reader :matched
      # @return [Hash{String => StoreError}] rows the filter kept that cannot be read
      attr_reader :failures

      # @param statuses [Array<Stores::Status>] ordered by name
      # @param failures [Hash{String => StoreError}] rows that cannot be read
      # @param page [String, nil] the `page` parameter
      def initialize(statuses, failures, filter:, page:, per_page:)
        @filter = filter.to_s
        @matcher = matcher(@filter)
        @total = statuses.size + failures.size
        kept = statuses.select { |status| keep?(status.name) }
        @failures = failures.select { |name, _error| keep?(name) }
        @matched = kept.size
        @pages = [(kept.size + per_page - 1) / per_page, 1].max
        @page = Integer(page.to_s, 10, exception: false)&.clamp(1, @pages) || 1
        @statuses = kept[(@page - 1) * per_page, per_page] || []
      end

      private

      def matcher(filter)
        return nil if filter.empty?
        return NamePattern.new(filter).method(:match?) if NamePattern.glob?(filter)

        ->(name) { name.include?(filter) }
      end

      def keep?(name)
        @matcher.nil? || @matcher.call(name)
      end
    end
  end
end
