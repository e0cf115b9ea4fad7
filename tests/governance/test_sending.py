"""The services send Celery tasks by name (governance/work/sending.py): every name they use is a task."""
import pytest

from governance.work import sending, tasks


@pytest.mark.parametrize("name", [sending.RUN_TASK, sending.PUBLISH_BATCH, sending.DELIVER_CALLBACK,
                                  sending.DELIVER_BATCH_CALLBACK])
def test_each_name_a_service_sends_is_a_task_of_the_worker(name):
    declared = {task.name: task for task in (tasks.run_task, tasks.publish_batch, tasks.deliver_callback,
                                             tasks.deliver_batch_callback)}
    assert sending.celery_task(name).name == name
    assert sending.celery_task(name) is declared[name]._get_current_object()


def test_an_unknown_name_is_an_error_not_a_silent_send():
    with pytest.raises(KeyError):
        sending.celery_task("governance.no_such_task")
