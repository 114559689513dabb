"""Plug-ins that go wrong the ways a researcher's model does."""

from inference.plugins import Model


class WrongShape(Model):
    """Answers a bare number where the benchmark's file holds a record with the unit's id."""

    benchmark = "dotcount"
    name = "shape-error"
    device = "cpu"

    def predict(self, batch):
        return [3 for _ in batch]


class FailsOnThirdBatch(Model):
    benchmark = "dotcount"
    name = "third-batch"
    device = "cpu"
    batch_size = 2

    def load(self, context):
        self.batches = 0

    def predict(self, batch):
        self.batches += 1
        if self.batches == 3:
            return self.divide(len(batch))
        return [{"id": unit.id, "answer": "1"} for unit in batch]

    def divide(self, size):
        return size / 0


class NamesAnotherUnit(Model):
    """Answers each unit with the id of the next one: a shuffled batch."""

    benchmark = "dotcount"
    name = "other-unit"
    device = "cpu"

    def predict(self, batch):
        ids = [unit.id for unit in batch]
        return [{"id": ids[(index + 1) % len(ids)], "answer": "1"} for index in range(len(ids))]
