import org.apache.hadoop.service.Service;
import org.apache.hadoop.util.ReflectionUtils;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.RMContextImpl;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;

/**
 * Loads a scheduler the way a ResourceManager does (yarn.resourcemanager.scheduler.class through
 * the configuration and ReflectionUtils), initialises and starts it against a sluiced, and stops
 * it. run-tests.sh runs it as a single-file program with Hadoop's jars and the shaded jar only,
 * as on a real RM's classpath: a class missing from the jar, or a relocation that breaks gRPC's
 * or protobuf's loading, fails here.
 *
 * <p>Usage: java -cp HADOOP_JARS:sluice-yarn-rm-all.jar LoadScheduler.java CLASS HOST:PORT
 */
public class LoadScheduler {
  public static void main(String[] args) throws Exception {
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, args[0]);
    conf.set("yarn.scheduler.sluice.address", args[1]);
    Class<? extends ResourceScheduler> c =
        conf.getClass(YarnConfiguration.RM_SCHEDULER, null, ResourceScheduler.class);
    ResourceScheduler scheduler = ReflectionUtils.newInstance(c, conf);
    scheduler.setRMContext(new RMContextImpl());
    Service service = (Service) scheduler;
    service.init(conf);
    service.start();
    service.stop();
    System.out.println("loaded " + c.getName() + " from " + c.getProtectionDomain().getCodeSource().getLocation());
  }
}
